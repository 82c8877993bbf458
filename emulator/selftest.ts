// Self-test: starts an emulator on a free port and exercises every route,
// the 4.7 filters, every fault kind, request recording and the WebSocket
// stream. Run: npx tsx emulator/selftest.ts (exits non-zero on failure).
import WebSocket from 'ws';
import {
  DEMO_PLATFORM_KEY as DEMO,
  DEMO_SECOND_KEY as DEMO2,
  OTHER_PLATFORM_KEY as OTHER,
} from './seed';
import { startEmulator } from './server';

let passed = 0;
let failed = 0;
function check(name: string, cond: boolean, detail?: unknown): void {
  if (cond) passed++;
  else {
    failed++;
    console.log(`FAIL ${name}`, detail === undefined ? '' : JSON.stringify(detail).slice(0, 300));
  }
}

const emu = await startEmulator({ port: 0 });
type Res = { status: number; type: string; text: string; json: any };
type Opts = {
  key?: string;
  header?: 'authorization' | 'x-api-key';
  body?: unknown;
  rid?: string;
  signal?: AbortSignal;
};

async function call(method: string, path: string, o: Opts = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  if (o.key !== undefined) headers[o.header ?? 'authorization'] = o.key;
  if (o.rid) headers['x-request-id'] = o.rid;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const init: RequestInit = { method, headers };
  if (o.body !== undefined)
    init.body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  if (o.signal) init.signal = o.signal;
  const r = await fetch(emu.url + path, init);
  const text = await r.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, type: r.headers.get('content-type') ?? '', text, json };
}
const A = (key: string) => ({ key, header: 'authorization' as const });
const X = (key: string) => ({ key, header: 'x-api-key' as const });
const okEnv = (r: Res) =>
  r.status === 200 &&
  r.json?.code === 0 &&
  r.json?.msg === 'Success' &&
  r.type.startsWith('application/json');
const control = (method: string, path: string, body?: unknown) =>
  call(method, `/__emulator${path}`, body === undefined ? {} : { body });

// ---- auth and 404 ----
const UNAUTH = '{"code":401,"msg":"Unauthorized: invalid or missing API key","data":null}';
for (const [method, path, header] of [
  ['GET', '/user/apikey/lists', 'authorization'],
  ['GET', '/user/call/filter_values', 'authorization'],
  ['GET', '/team/lists', 'authorization'],
  ['GET', '/user/call/lists', 'x-api-key'],
  ['GET', '/agent/lists', 'x-api-key'],
] as const) {
  check(`${path} ok with ${header}`, okEnv(await call(method, path, { key: DEMO, header })));
  const none = await call(method, path);
  check(`${path} 401 without key`, none.status === 401 && none.text === UNAUTH, none);
  const wrong = await call(method, path, {
    key: DEMO,
    header: header === 'authorization' ? 'x-api-key' : 'authorization',
  });
  check(`${path} 401 with key in the wrong header`, wrong.status === 401, wrong.status);
}
check(
  'Bearer accepted in Authorization',
  okEnv(await call('GET', '/team/lists', A(`Bearer ${DEMO}`))),
);
check('unknown key 401', (await call('GET', '/team/lists', A('sk-emu-nope'))).status === 401);
const nf = await call('GET', '/no/such/route', A(DEMO));
check(
  'unknown path 404 envelope',
  nf.status === 404 && nf.text === '{"code":404,"msg":"Not Found","data":null}',
  nf,
);

// ---- 4.1–4.3 keys ----
const keys0 = await call('GET', '/user/apikey/lists', A(DEMO));
check(
  'demo has 2 keys incl. second key',
  keys0.json.data.total === 2 && keys0.json.data.data.some((k: any) => k.api_key === DEMO2),
  keys0.json,
);
const created = await call('POST', '/user/apikey/new', { ...A(DEMO), body: { name: 'selftest' } });
const newKey: string = created.json?.data?.api_key;
check('4.1 new key', okEnv(created) && /^sk-emu-[0-9a-f]{40}$/.test(newKey), created.json);
check('new key usable at once', okEnv(await call('GET', '/team/lists', A(newKey))));
check(
  '4.1 missing name -> 10400',
  (await call('POST', '/user/apikey/new', { ...A(DEMO), body: {} })).json?.code === 10400,
);
check(
  '4.1 bad JSON -> 400',
  (await call('POST', '/user/apikey/new', { ...A(DEMO), body: '{nope' })).status === 400,
);
const keys1 = (await call('GET', '/user/apikey/lists?page_size=2&page_num=2', A(DEMO))).json.data;
check(
  '4.3 paging',
  keys1.total === 3 &&
    keys1.total_page === 2 &&
    keys1.data.length === 1 &&
    keys1.data[0].api_key === newKey,
  keys1,
);
const kid = keys1.data[0].id;
check(
  '4.2 other account key id -> 10404',
  (await call('DELETE', '/user/apikey/delete/3', A(DEMO))).json?.code === 10404,
);
check(
  '4.2 non-integer id -> 10400',
  (await call('DELETE', '/user/apikey/delete/abc', A(DEMO))).json?.code === 10400,
);
const del = await call('DELETE', `/user/apikey/delete/${kid}`, A(DEMO));
check('4.2 delete', okEnv(del) && JSON.stringify(del.json.data) === '{}', del.json);
check('deleted key is 401', (await call('GET', '/team/lists', A(newKey))).status === 401);
const del2 = await call('DELETE', `/user/apikey/delete/${kid}`, A(DEMO));
check(
  '4.2 unknown id -> 200 + 10404',
  del2.status === 200 && del2.json.code === 10404 && del2.json.msg === 'api key not found',
  del2.json,
);
const used = (await call('GET', '/user/apikey/lists', A(DEMO2))).json.data.data.find(
  (k: any) => k.api_key === DEMO2,
);
check('last_used_at updated', Date.now() - Date.parse(used.last_used_at) < 10_000, used);

// ---- 4.4–4.6 filter values and teams ----
const fv = (await call('GET', '/user/call/filter_values', A(DEMO))).json.data;
check(
  '4.4 shapes',
  Array.isArray(fv.api_key_names) &&
    fv.api_key_names.length >= 2 &&
    JSON.stringify(fv.platforms) === '["engine","extension","api"]' &&
    JSON.stringify(fv.states) === '["success","failed","running","cancelled"]',
  fv,
);
const teams = (await call('GET', '/team/lists', A(DEMO))).json.data;
check(
  '4.5 paged 13 teams',
  teams.total === 13 &&
    teams.total_page === 2 &&
    teams.data.length === 10 &&
    teams.page_size === 10,
  teams,
);
const t0 = teams.data[0];
check(
  '4.5 team complete',
  t0.name.startsWith('Demo:') &&
    t0.model.api_key === '' &&
    t0.agents.length > 0 &&
    t0.deleted_at === 0 &&
    typeof t0.parameters.max_turns === 'number' &&
    t0.agents[0].model.api_key === '',
  t0,
);
const sys = (await call('GET', '/team/lists?team_type=system', A(DEMO))).json.data.total;
const usr = (await call('GET', '/team/lists?team_type=user&page_size=100', A(DEMO))).json.data
  .total;
check('4.5 team_type filter', sys === 4 && usr === 9, { sys, usr });
check(
  '4.5 bad team_type -> 400',
  (await call('GET', '/team/lists?team_type=x', A(DEMO))).status === 400,
);
check(
  '4.5 page_size 0 / 101 / abc -> 400',
  (
    await Promise.all(
      ['0', '101', 'abc'].map((s) => call('GET', `/team/lists?page_size=${s}`, A(DEMO))),
    )
  ).every((r) => r.status === 400 && r.json.code === 10400),
);
const otherTeams = (await call('GET', '/team/lists?page_size=100', A(OTHER))).json.data.data;
check(
  'accounts see different teams',
  otherTeams.every((t: any) => t.name.startsWith('Other:') && t.team_id !== t0.team_id),
);
check(
  '4.6 team info',
  (await call('GET', `/team/info/${t0.team_id}`, A(DEMO))).json?.data?.team_id === t0.team_id,
);
const tOther = await call('GET', `/team/info/${t0.team_id}`, A(OTHER));
check(
  '4.6 other account -> 10404',
  tOther.json.code === 10404 && tOther.json.msg === 'team not found',
  tOther.json,
);

// ---- 4.7 call history ----
const calls = async (q: string) => (await call('GET', `/user/call/lists${q}`, X(DEMO))).json;
const all = (await calls('?page_size=100')).data;
check('4.7 57 records', all.total === 57 && all.data.length === 57, all.total);
const def = (await calls('')).data;
check(
  '4.7 defaults',
  def.page_num === 1 && def.page_size === 10 && def.data.length === 10 && def.total_page === 6,
  def,
);
const times = all.data.map((r: any) => r.created_at);
check(
  '4.7 default order created_at desc',
  times.every((t: string, i: number) => i === 0 || times[i - 1] >= t),
);
const asc = (await calls('?order=asc&page_size=100')).data.data;
check(
  '4.7 asc',
  asc[0].created_at.startsWith('2026-09-01') && asc[56].created_at.startsWith('2026-11-20'),
);
const costs = (await calls('?order_field=total_cost&order=asc&page_size=100')).data.data.map(
  (r: any) => r.cost.total_credit,
);
check(
  '4.7 total_cost asc',
  costs.every((c: number, i: number) => i === 0 || costs[i - 1] <= c),
  costs,
);
let platformSum = 0;
for (const p of ['engine', 'extension', 'api']) {
  const d = (await calls(`?platform=${p}&page_size=100`)).data;
  platformSum += d.total;
  check(`4.7 platform=${p}`, d.total > 0 && d.data.every((r: any) => r.platform === p));
}
check(
  '4.7 platform=all and partition',
  platformSum === 57 && (await calls('?platform=all')).data.total === 57,
);
for (const s of ['success', 'failed', 'running', 'cancelled']) {
  const d = (await calls(`?status=${s}&page_size=100`)).data;
  check(`4.7 status=${s}`, d.total > 0 && d.data.every((r: any) => r.status === s));
}
const byName = (await calls('?api_key_name=ci-runner&page_size=100')).data;
check(
  '4.7 api_key_name',
  byName.total > 0 && byName.data.every((r: any) => r.api_key_name === 'ci-runner'),
);
check(
  '4.7 inclusive single day',
  (await calls('?start_date=2026-09-01&end_date=2026-09-01')).data.total === 1,
);
check('4.7 inclusive end', (await calls('?start_date=2026-11-20')).data.total === 1);
const oct = (await calls('?start_date=2026-10-01&end_date=2026-10-31&page_size=100')).data;
check(
  '4.7 month range',
  oct.total > 10 && oct.data.every((r: any) => r.created_at.startsWith('2026-10')),
  oct.total,
);
const page6 = (await calls('?page_num=6')).data;
check('4.7 last page', page6.data.length === 7 && page6.total === 57);
for (const bad of [
  'start_date=2026-02-30',
  'start_date=2026-13-01',
  'start_date=2026-11-02&end_date=2026-11-01',
  'order=up',
  'order_field=x',
  'platform=web',
  'status=ok',
  'page_num=0',
]) {
  const r = await call('GET', `/user/call/lists?${bad}`, X(DEMO));
  check(`4.7 bad ${bad} -> 400`, r.status === 400 && r.json.code === 10400, r.json);
}
check(
  '4.7 accounts separate',
  (await call('GET', '/user/call/lists?page_size=1', X(OTHER))).json.data.data[0].session_id !==
    def.data[0].session_id,
);

// ---- 4.8 agents, sessions, messages, browsers ----
const agents = (await call('GET', '/agent/lists', X(DEMO))).json.data;
check(
  'agent list paged',
  agents.page_size === 10 && agents.data.length === 10 && agents.total > 20,
  agents.total,
);
const sysAgents = (await call('GET', '/agent/lists?agent_type=system&page_size=100', X(DEMO))).json
  .data;
check(
  'agent_type filter',
  sysAgents.total > 0 &&
    sysAgents.total < agents.total &&
    sysAgents.data.every((a: any) => a.user_id === t0.user_id),
);
check(
  'agent info',
  (await call('GET', `/agent/info/${agents.data[0].agent_id}`, X(DEMO))).json.data.agent_id ===
    agents.data[0].agent_id,
);
check(
  'agent unknown -> 10404',
  (await call('GET', '/agent/info/nope', X(DEMO))).json.code === 10404,
);
check(
  'session create unknown team -> 10404',
  (await call('POST', '/session/create', { ...X(DEMO), body: { team_id: otherTeams[0].team_id } }))
    .json.code === 10404,
);
check(
  'session create no team -> 10400',
  (await call('POST', '/session/create', { ...X(DEMO), body: { task: 'x' } })).json.code === 10400,
);
const sc = await call('POST', '/session/create', {
  ...X(DEMO),
  body: { team_id: t0.team_id, task: 'Find a kettle', title: 'Kettle' },
});
const sid: string = sc.json?.data?.session_id;
check('session create', okEnv(sc) && /^[0-9a-f-]{36}$/.test(sid), sc.json);
const s1 = (await call('GET', `/session/info/${sid}`, X(DEMO))).json.data;
check(
  'session info',
  s1.name === 'Kettle' && s1.team_id === t0.team_id && Array.isArray(s1.messages) && s1.browser_id,
  s1,
);
const ren = await call('PUT', `/session/info/${sid}`, {
  ...X(DEMO),
  body: { title: 'Renamed', session_id: sid },
});
check(
  'session rename',
  okEnv(ren) && (await call('GET', `/session/info/${sid}`, X(DEMO))).json.data.name === 'Renamed',
);
check(
  'session other account -> 10404',
  (await call('GET', `/session/info/${sid}`, X(OTHER))).json.code === 10404,
);

const browsersAll = (await call('GET', '/browser/lists', X(DEMO))).json.data;
const seeded = browsersAll.browsers.find((b: any) => b.pages.length === 3 && b.status === 'closed');
const seededSid: string = seeded.session_id;
const ml = (await call('GET', `/session/message/lists?session_id=${seededSid}`, X(DEMO))).json.data;
check(
  'messages default page',
  ml.total_count === 25 &&
    ml.messages.length === 20 &&
    ml.has_next &&
    !ml.has_prev &&
    ml.page_size === 20 &&
    ml.total_page === 2,
  ml,
);
const ml2 = (
  await call('GET', `/session/message/lists?session_id=${seededSid}&page_num=2`, X(DEMO))
).json.data;
check('messages page 2', ml2.messages.length === 5 && !ml2.has_next && ml2.has_prev);
const users = (
  await call('GET', `/session/message/lists?session_id=${seededSid}&role=user`, X(DEMO))
).json.data;
check(
  'role filter',
  users.total_count > 0 && users.messages.every((m: any) => m.source === 'user'),
);
const kettle = (
  await call('GET', `/session/message/lists?session_id=${seededSid}&content=KETTLE`, X(DEMO))
).json.data;
check(
  'content filter case-insensitive',
  kettle.total_count >= 1 && kettle.messages.every((m: any) => /kettle/i.test(m.content)),
);
const m3 = ml.messages[3].created_at;
const m7 = ml.messages[7].created_at;
const tr = (
  await call(
    'GET',
    `/session/message/lists?session_id=${seededSid}&from_timestamp=${m3}&to_timestamp=${m7}`,
    X(DEMO),
  )
).json.data;
check('timestamp filter inclusive', tr.total_count === 5, tr.total_count);
check(
  'bad timestamp -> 400',
  (
    await call(
      'GET',
      `/session/message/lists?session_id=${seededSid}&from_timestamp=yesterday`,
      X(DEMO),
    )
  ).status === 400,
);
const between = (
  await call(
    'GET',
    `/session/message/between?session_id=${seededSid}&from_message_id=${ml.messages[2].message_id}&to_message_id=${ml.messages[5].message_id}`,
    X(DEMO),
  )
).json;
check(
  'between is inclusive array',
  Array.isArray(between.data) &&
    between.data.length === 4 &&
    between.data[0].message_id === ml.messages[2].message_id,
  between,
);
check(
  'between unknown -> 10404',
  (
    await call(
      'GET',
      `/session/message/between?session_id=${seededSid}&from_message_id=x&to_message_id=y`,
      X(DEMO),
    )
  ).json.code === 10404,
);
const bl = (await call('GET', `/browser/lists?session_id=${seededSid}&page_size=1`, X(DEMO))).json
  .data;
check('browser lists', bl.total === 2 && bl.browsers.length === 1, bl);
const bid: string = seeded.browser_id;
const bi = (await call('GET', `/browser/info/${bid}`, X(DEMO))).json.data;
check(
  'browser info',
  bi.browser_id === bid && bi.pages.length === 3 && typeof bi.pages[0].ws_debugger_url === 'string',
);
const pl = (await call('GET', `/browser/page/lists?browser_id=${bid}&page_size=2`, X(DEMO))).json
  .data;
check('browser pages', pl.total === 3 && pl.pages.length === 2, pl);
const newBid = s1.browser_id as string;
check(
  'release',
  okEnv(await call('DELETE', `/browser/release/${newBid}`, X(DEMO))) &&
    (await call('GET', `/browser/info/${newBid}`, X(DEMO))).json.data.status === 'closed',
);
check(
  'browser unknown -> 10404',
  (await call('GET', '/browser/info/nope', X(DEMO))).json.code === 10404,
);
check(
  'browser other account -> 10404',
  (await call('DELETE', `/browser/release/${bid}`, X(OTHER))).json.code === 10404,
);

// ---- recording ----
await call('POST', '/user/apikey/new', { ...A(DEMO), body: { name: 'rec' }, rid: 'rid-rec-1' });
await call('GET', '/team/lists?page_num=1&extra=yes', { ...A(DEMO), rid: 'rid-rec-2' });
const rec1 = await control('GET', '/requests?request_id=rid-rec-1');
const r1 = rec1.json[0];
check(
  'recorded exactly one',
  rec1.json.length === 1 &&
    r1.method === 'POST' &&
    r1.path === '/user/apikey/new' &&
    r1.body === '{"name":"rec"}' &&
    r1.headers.authorization === DEMO &&
    r1.headers['content-type'] === 'application/json' &&
    typeof r1.seq === 'number',
  rec1.json,
);
const r2 = (await control('GET', '/requests?request_id=rid-rec-2')).json[0];
check(
  'recorded query',
  r2.query.extra === 'yes' && r2.query.page_num === '1' && r2.body === null,
  r2,
);
check(
  'control not recorded',
  (await control('GET', '/requests')).json.every((r: any) => !r.path.startsWith('/__emulator')),
);

// ---- faults ----
const fault = (f: Record<string, unknown>) => control('POST', '/faults', f);
const expectFault = async (
  kind: string,
  extra: Record<string, unknown>,
  test: (r: Res) => boolean,
) => {
  const rid = `rid-fault-${kind}`;
  await fault({ request_id: rid, kind, ...extra });
  const r = await call('GET', '/team/lists', { ...A(DEMO), rid });
  check(`fault ${kind}`, test(r), r);
  check(
    `fault ${kind} recorded`,
    (await control('GET', `/requests?request_id=${rid}`)).json.length === 1,
  );
  check(`fault ${kind} used once`, okEnv(await call('GET', '/team/lists', { ...A(DEMO), rid })));
};
await expectFault(
  'status',
  { status: 503 },
  (r) => r.status === 503 && r.text === '{"code":503,"msg":"emulated failure","data":null}',
);
await expectFault(
  'html',
  {},
  (r) => r.status === 200 && r.type.startsWith('text/html') && r.text === '<html>oops</html>',
);
await expectFault(
  'invalid_json',
  {},
  (r) => r.status === 200 && r.type.startsWith('application/json') && r.json === undefined,
);
await expectFault('bad_envelope', {}, (r) => r.status === 200 && r.text === '{"hello":"world"}');
await expectFault(
  'platform_error',
  {},
  (r) => r.status === 200 && r.json.code === 20001 && r.json.msg === 'platform says no',
);
check(
  'fault default status 500',
  (await fault({ request_id: 'rid-500', kind: 'status' })).json.status === 500 &&
    (await call('GET', '/team/lists', { ...A(DEMO), rid: 'rid-500' })).status === 500,
);
check('fault bad kind -> 400', (await fault({ kind: 'boom' })).status === 400);
await fault({ request_id: 'rid-other', kind: 'status' });
check(
  'fault only hits its request_id',
  okEnv(await call('GET', '/team/lists', { ...A(DEMO), rid: 'rid-unrelated' })),
);
await control('DELETE', '/faults');
await fault({ path: '/agent/', kind: 'platform_error', times: 2 });
const pf = [
  await call('GET', '/agent/lists', X(DEMO)),
  await call('GET', '/agent/info/x', X(DEMO)),
  await call('GET', '/agent/lists', X(DEMO)),
];
check(
  'path fault times=2',
  pf[0]!.json.code === 20001 && pf[1]!.json.code === 20001 && okEnv(pf[2]!),
);
let hangStart = Date.now();
await fault({ request_id: 'rid-hang', kind: 'hang', delay_ms: 400 });
const hung = call('GET', '/team/lists', { ...A(DEMO), rid: 'rid-hang' });
const fast = await call('GET', '/team/lists', A(DEMO));
check('hang does not block others', okEnv(fast) && Date.now() - hangStart < 300);
const hr = await hung;
check('hang answers normally after delay', okEnv(hr) && Date.now() - hangStart >= 390);
await fault({ request_id: 'rid-hang-abort', kind: 'hang', delay_ms: 60_000 });
hangStart = Date.now();
const aborted = await call('GET', '/team/lists', {
  ...A(DEMO),
  rid: 'rid-hang-abort',
  signal: AbortSignal.timeout(200),
}).then(
  () => false,
  () => true,
);
check('hang aborted by client', aborted && Date.now() - hangStart < 1000);
await fault({ request_id: 'rid-reset', kind: 'reset' });
const reset = await call('GET', '/team/lists', { ...A(DEMO), rid: 'rid-reset' }).then(
  () => 'answered',
  (e: Error) => e.name,
);
check('reset -> network error', reset === 'TypeError', reset);
check('alive after reset', okEnv(await call('GET', '/team/lists', A(DEMO))));

// ---- WebSocket stream ----
type WsResult = { frames: any[]; close?: number; status?: number };
function wsRun(path: string): Promise<WsResult> {
  return new Promise((resolve) => {
    const out: WsResult = { frames: [] };
    const ws = new WebSocket(emu.url.replace('http', 'ws') + path, {
      headers: { 'x-request-id': 'rid-ws' },
    });
    ws.on('message', (d) => out.frames.push(JSON.parse(String(d))));
    ws.on('unexpected-response', (_req, res) => {
      out.status = res.statusCode;
      resolve(out);
    });
    ws.on('close', (code) => {
      out.close = code;
      resolve(out);
    });
    ws.on('error', () => resolve(out));
  });
}
const stream = await wsRun(`/session/ws/${seededSid}?api_key=${DEMO}`);
const f = stream.frames;
check(
  'ws snapshot first',
  f[0]?.type === 'session.snapshot' && f[0].session_id === seededSid && f[0].message_count === 25,
  f[0],
);
check(
  'ws replays then streams',
  f.filter((x) => x.type === 'message').length === 30 &&
    f[1].message.message_id === ml.messages[0].message_id,
);
check(
  'ws ends completed',
  f.at(-1)?.type === 'session.status' && f.at(-1)?.status === 'completed' && stream.close === 1000,
  f.at(-1),
);
const after = (await call('GET', `/session/info/${seededSid}`, X(DEMO))).json.data;
check('ws messages stored', after.messages.length === 30 && after.status === 'completed');
check('ws bad key -> 401', (await wsRun(`/session/ws/${seededSid}?api_key=bad`)).status === 401);
check(
  'ws other account session -> 4404',
  (await wsRun(`/session/ws/${seededSid}?api_key=${OTHER}`)).close === 4404,
);
const wsRec = (await control('GET', '/requests?request_id=rid-ws')).json;
check(
  'ws upgrades recorded',
  wsRec.length === 3 &&
    wsRec[0].path === `/session/ws/${seededSid}` &&
    wsRec[0].query.api_key === DEMO,
  wsRec.length,
);

// ---- reset ----
await control('POST', '/reset');
check('reset clears records', (await control('GET', '/requests')).json.length === 0);
check(
  'reset restores keys',
  (await call('GET', '/user/apikey/lists', A(DEMO))).json.data.total === 2,
);
check(
  'reset restores sessions',
  (await call('GET', `/session/info/${sid}`, X(DEMO))).json.code === 10404 &&
    (await call('GET', `/session/message/lists?session_id=${seededSid}`, X(DEMO))).json.data
      .total_count === 25,
);

await emu.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
