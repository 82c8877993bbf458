// Platform routes 4.8: agents, sessions, messages and browsers (all x-api-key).
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { requireKey } from './auth';
import {
  badRequest,
  type Ctx,
  type EmuEnv,
  enumParam,
  envelope,
  jsonBody,
  notFound,
  ok,
  optString,
  paged,
  pageParams,
  requiredParam,
  slicePage,
} from './http';
import { makeBrowser, SYSTEM_USER_ID } from './seed';
import type {
  BrowserList,
  BrowserPageList,
  Message,
  MessagePage,
  NewSession,
  Session,
} from './types';

const xApiKey = requireKey('x-api-key');

/** What GET /session/marketing/data/{session_id} may be filtered by. */
const MARKETING_TYPES = ['reply', 'like', 'retweet', 'tweet'] as const;

export function findSession(c: Ctx, id: string): Session {
  const session = c.get('account').sessions.find((s) => s.session_id === id);
  if (!session) throw notFound('session');
  return session;
}

function findBrowser(c: Ctx, id: string) {
  const browser = c.get('account').browsers.find((b) => b.browser_id === id);
  if (!browser) throw notFound('browser');
  return browser;
}

function timeParam(c: Ctx, name: string): number | undefined {
  const raw = c.req.query(name);
  if (!raw) return undefined;
  const t = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(t))
    throw badRequest(`${name} must be an ISO 8601 date-time`);
  return t;
}

/** Filter role names the sender; messages call the assistant side "agent". */
const roleMatches = (m: Message, role: string) =>
  m.source === role || (role === 'assistant' && m.source === 'agent');

export const sessionRoutes = new Hono<EmuEnv>()
  .get('/agent/lists', xApiKey, (c) => {
    const type = enumParam(c, 'agent_type', ['all', 'system', 'user'] as const, 'all');
    const agents = c
      .get('account')
      .teams.flatMap((t) => t.agents)
      .filter((a) => type === 'all' || (a.user_id === SYSTEM_USER_ID) === (type === 'system'));
    return ok(c, paged(agents, pageParams(c, 10)));
  })
  .get('/agent/info/:agent_id', xApiKey, (c) => {
    const agent = c
      .get('account')
      .teams.flatMap((t) => t.agents)
      .find((a) => a.agent_id === c.req.param('agent_id'));
    if (!agent) throw notFound('agent');
    return ok(c, agent);
  })
  // A new session starts active with one open browser, so browser routes work for it too.
  // Two shapes: the specification's {team_id, task, title}, and the current client's
  // {task, intent_id?, mode?, platform?, extra?} without a team.
  .post('/session/create', xApiKey, (c) => {
    const body = jsonBody(c);
    const teamId = optString(body, 'team_id');
    const task = optString(body, 'task') ?? '';
    const title = optString(body, 'title');
    const intentId = optString(body, 'intent_id');
    const mode = optString(body, 'mode');
    const platform = optString(body, 'platform');
    const extra = body.extra;
    if (
      extra !== undefined &&
      (typeof extra !== 'object' || extra === null || Array.isArray(extra))
    )
      throw badRequest('extra must be an object');
    if (!teamId && !task) throw badRequest('task is required');
    const account = c.get('account');
    if (teamId && !account.teams.some((t) => t.team_id === teamId)) throw notFound('team');
    const now = new Date().toISOString();
    const session_id = randomUUID();
    const browser = makeBrowser(randomUUID(), account.user_id, session_id, now, 'open', 1);
    account.browsers.push(browser);
    account.sessions.push({
      session_id,
      status: 'active',
      browser_id: browser.browser_id,
      team_id: teamId ?? '',
      intent_id: intentId ?? randomUUID(),
      name: title || task.slice(0, 60) || 'Untitled session',
      task: task ? [{ role: 'user', content: task }] : [],
      task_result: {},
      messages: [],
      duration: 0,
      error_message: '',
      attachments: [],
      platform: platform ?? 'api',
      visibility: 'private',
      created_at: now,
      updated_at: now,
      ...(mode ? { mode } : {}),
    });
    return ok<NewSession>(c, { session_id });
  })
  // The current client's marketing sessions: what they found, by kind (type filters).
  .get('/session/marketing/data/:session_id', xApiKey, (c) => {
    const session = findSession(c, c.req.param('session_id'));
    const type = enumParam(c, 'type', ['', ...MARKETING_TYPES] as const, '');
    const items = MARKETING_TYPES.filter((t) => !type || t === type).map((kind, i) => ({
      type: kind,
      content: `${kind} found for ${session.name}`,
      url: `https://x.example/marketing/${session.session_id}/${i + 1}`,
    }));
    const counts = Object.fromEntries(
      MARKETING_TYPES.map((t) => [t, items.filter((x) => x.type === t).length]),
    );
    return ok(c, {
      session_id: session.session_id,
      mode: session.mode ?? '',
      type: type || 'all',
      items,
      counts,
    });
  })
  .get('/session/info/:session_id', xApiKey, (c) =>
    ok(c, findSession(c, c.req.param('session_id'))),
  )
  .put('/session/info/:session_id', xApiKey, (c) => {
    const session = findSession(c, c.req.param('session_id'));
    const title = optString(jsonBody(c), 'title');
    if (!title) throw badRequest('title is required');
    session.name = title;
    session.updated_at = new Date().toISOString();
    return ok(c, {});
  })
  .get('/session/message/lists', xApiKey, (c) => {
    const session = findSession(c, requiredParam(c, 'session_id'));
    const page = pageParams(c, 20);
    const role = c.req.query('role');
    const content = c.req.query('content')?.toLowerCase();
    const from = timeParam(c, 'from_timestamp');
    const to = timeParam(c, 'to_timestamp');
    const rows = session.messages.filter((m) => {
      const t = Date.parse(m.created_at);
      return (
        (!role || roleMatches(m, role)) &&
        (!content || m.content.toLowerCase().includes(content)) &&
        (from === undefined || t >= from) &&
        (to === undefined || t <= to)
      );
    });
    const total_page = Math.ceil(rows.length / page.page_size);
    return ok<MessagePage>(c, {
      messages: slicePage(rows, page),
      total_count: rows.length,
      has_next: page.page_num < total_page,
      has_prev: page.page_num > 1,
      ...page,
      total_page,
    });
  })
  // Inclusive range between two message ids, in session order whichever id comes first.
  .get('/session/message/between', xApiKey, (c) => {
    const session = findSession(c, requiredParam(c, 'session_id'));
    const ids = session.messages.map((m) => m.message_id);
    const a = ids.indexOf(requiredParam(c, 'from_message_id'));
    const b = ids.indexOf(requiredParam(c, 'to_message_id'));
    if (a < 0 || b < 0) throw notFound('message');
    return ok(c, session.messages.slice(Math.min(a, b), Math.max(a, b) + 1));
  })
  .get('/browser/info/:browser_id', xApiKey, (c) =>
    ok(c, findBrowser(c, c.req.param('browser_id'))),
  )
  .get('/browser/lists', xApiKey, (c) => {
    const sessionId = c.req.query('session_id');
    if (sessionId) findSession(c, sessionId);
    const browsers = c
      .get('account')
      .browsers.filter((b) => !sessionId || b.session_id === sessionId);
    return ok<BrowserList>(c, {
      browsers: slicePage(browsers, pageParams(c, 20)),
      total: browsers.length,
    });
  })
  .delete('/browser/release/:browser_id', xApiKey, (c) => {
    findBrowser(c, c.req.param('browser_id')).status = 'closed';
    return ok(c, {});
  })
  .get('/browser/page/lists', xApiKey, (c) => {
    const browser = findBrowser(c, requiredParam(c, 'browser_id'));
    return ok<BrowserPageList>(c, {
      pages: slicePage(browser.pages, pageParams(c, 20)),
      total: browser.pages.length,
    });
  })
  // The event stream is WebSocket only (see ws.ts); a plain GET gets told so.
  .get('/session/ws/:session_id', (c) =>
    c.json(envelope(426, 'Upgrade Required: use a WebSocket', null), 426),
  );
