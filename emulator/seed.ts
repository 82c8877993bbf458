// Deterministic seed data: the same ids, keys and records on every start and
// every reset, so tests can rely on them. Everything derives from a label
// hashed with SHA-256; nothing reads the clock or Math.random.
import { createHash } from 'node:crypto';
import { seedDashboard } from './dashboard-seed';
import type {
  Account,
  Agent,
  ApiKey,
  Browser,
  CallRecord,
  Message,
  Model,
  Session,
  Team,
} from './types';

const sha = (label: string): string => createHash('sha256').update(label).digest('hex');

/** A UUID (version 4 layout) derived from a label. */
export function uuidFrom(label: string): string {
  const h = sha(label);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const keyFrom = (label: string): string => `sk-emu-${sha(`key:${label}`).slice(0, 40)}`;

/** Small seeded PRNG (mulberry32) so "random" data is stable across runs. */
function rng(label: string): () => number {
  let s = parseInt(sha(label).slice(0, 8), 16);
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const DEMO_PLATFORM_KEY = keyFrom('demo:default');
export const DEMO_SECOND_KEY = keyFrom('demo:ci-runner');
export const OTHER_PLATFORM_KEY = keyFrom('other:default');
export const DEMO_USER_ID = uuidFrom('account:demo');
export const OTHER_USER_ID = uuidFrom('account:other');
/** Owner of the platform's built-in ("system") teams and agents. */
export const SYSTEM_USER_ID = '00000000-0000-4000-8000-000000000000';

export const PLATFORMS = ['engine', 'extension', 'api'] as const;
export const STATES = ['success', 'failed', 'running', 'cancelled'] as const;

const SYSTEM_TEAMS = ['Web Research Crew', 'Checkout Tester', 'Data Extractor', 'Form Filler'];
const USER_TEAMS = [
  'Price Watch',
  'Lead Finder',
  'Docs Summarizer',
  'Travel Planner',
  'Job Scout',
  'News Digest',
  'SEO Auditor',
  'Inbox Triage',
  'Market Mapper',
];
const AGENT_TYPES = [
  'svc_engine_flow_proxy_agent',
  'svc_file_reader_agent',
  'svc_web_browser_agent',
  'coder',
  'designer',
];
const MODELS: [string, string][] = [
  ['openai', 'gpt-4o'],
  ['anthropic', 'claude-sonnet'],
  ['deepseek', 'deepseek-chat'],
];
const AGENT_LINES = [
  'Opening the checkout page to compare prices.',
  'Plan: search, open the top results, extract the price table.',
  'await page.click("#accept-cookies")',
  'Found 3 matching products; the cheapest is 19.99 EUR.',
  'Taking a screenshot of the results for the report.',
  'The login form needs a CAPTCHA; solving it automatically.',
  'Summary: all requested fields were extracted.',
  'Navigating to the next page of results.',
];

const day = (iso: string, plusDays: number): Date =>
  new Date(Date.parse(iso) + plusDays * 86_400_000);
const round4 = (n: number): number => Math.round(n * 10_000) / 10_000;

function model(i: number): Model {
  const [provider, model_type] = MODELS[i % MODELS.length]!;
  return {
    system_model_id: uuidFrom(`model:${model_type}`),
    user_id: '',
    provider,
    model_type,
    base_url: '',
    api_key: '',
    icon_url: `https://static.emulator.invalid/models/${provider}.png`,
    created_at: '',
    updated_at: '',
  };
}

function teams(acct: string, display: string, userId: string): Team[] {
  const names = [
    ...SYSTEM_TEAMS.map((n) => [n, true] as const),
    ...USER_TEAMS.map((n) => [n, false] as const),
  ];
  return names.map(([base, system], i) => {
    const owner = system ? SYSTEM_USER_ID : userId;
    const at = day('2026-06-01T09:00:00.000Z', i * 3).toISOString();
    const agents: Agent[] = Array.from({ length: 1 + (i % 3) }, (_, j) => ({
      agent_id: uuidFrom(`${acct}:team${i}:agent${j}`),
      user_id: owner,
      avatar: `https://static.emulator.invalid/agents/${(i + j) % 8}.png`,
      name: `${display} ${base} agent ${j + 1}`,
      description: `Agent ${j + 1} of ${base}`,
      system_message: `You are agent ${j + 1} of the ${base} team.`,
      component_type: 'svc_agent',
      agent_type: AGENT_TYPES[(i + j) % AGENT_TYPES.length]!,
      model: model(i + j),
      parameters: {
        system_prompt_role: 'assistant',
        system_prompt_task_skill: base.toLowerCase(),
        temperature: 0.2 + j * 0.3,
      },
      created_at: at,
      updated_at: at,
    }));
    return {
      team_id: uuidFrom(`${acct}:team${i}`),
      user_id: owner,
      avatar: `https://static.emulator.invalid/teams/${i}.png`,
      name: `${display}: ${base}`,
      description: `${base} (${system ? 'built-in' : 'custom'} team of ${display})`,
      component_type: 'svc_team',
      team_type: system ? 'svc_web_groupchat' : ['personal', 'shared'][i % 2]!,
      agents,
      termination: '{}',
      model: model(i),
      parameters: {
        system_prompt_role: 'coordinator',
        system_prompt_task_skill: base.toLowerCase(),
        max_turns: 10 + i,
        temperature: 0.7,
      },
      created_at: at,
      updated_at: day(at, 1).toISOString(),
      deleted_at: 0,
    };
  });
}

function messages(label: string, task: string, start: Date, count: number): Message[] {
  const r = rng(`${label}:messages`);
  let round = 0;
  return Array.from({ length: count }, (_, i) => {
    const kind = i === 0 || i % 8 === 0 ? 'user' : i % 11 === 5 ? 'system' : 'agent';
    if (kind === 'user') round += 1;
    const content =
      i === 0
        ? task
        : kind === 'user'
          ? `Follow-up ${round}: also check the shipping costs.`
          : kind === 'system'
            ? 'Browser page loaded.'
            : AGENT_LINES[Math.floor(r() * AGENT_LINES.length)]!;
    const type = kind === 'agent' ? (['text', 'plan', 'tool_code'] as const)[i % 3]! : 'text';
    return {
      message_id: uuidFrom(`${label}:msg${i}`),
      source: kind,
      source_type: kind === 'user' ? 'human' : kind === 'system' ? 'system' : 'llm',
      source_component: kind === 'agent' ? uuidFrom(`${label}:component`) : kind,
      content,
      message: { type, text: content },
      type,
      created_at: new Date(start.getTime() + i * 37_000).toISOString(),
      attachments: [],
      session_round: Math.max(round, 1),
    };
  });
}

/** A browser with `pageCount` pages; exported so new sessions get one too. */
export function makeBrowser(
  id: string,
  userId: string,
  sessionId: string,
  createdAt: string,
  status: string,
  pageCount: number,
): Browser {
  const urls = [
    'https://shop.example.com/',
    'https://shop.example.com/search?q=kettle',
    'https://shop.example.com/checkout',
  ];
  return {
    browser_id: id,
    user_id: userId,
    session_id: sessionId,
    status,
    width: 1280,
    height: 800,
    ws_endpoint: `wss://browsers.emulator.invalid/devtools/browser/${id}`,
    solve_captcha: true,
    timezone: 'Europe/Berlin',
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64) EmulatedChrome/130.0',
    duration_seconds: 120 * pageCount,
    created_at: createdAt,
    pages: Array.from({ length: pageCount }, (_, i) => {
      const pageId = `${id.slice(0, 8)}-page-${i}`;
      return {
        index: i,
        url: urls[i % urls.length]!,
        status: i === pageCount - 1 && status === 'open' ? 'loading' : 'completed',
        video_url: `https://static.emulator.invalid/videos/${pageId}.mp4`,
        ws_debugger_url: `wss://browsers.emulator.invalid/devtools/page/${pageId}`,
        front_debugger_url: `https://browsers.emulator.invalid/devtools/inspector.html?page=${pageId}`,
        page_id: pageId,
        debugger_host: 'browsers.emulator.invalid',
      };
    }),
  };
}

function sessions(
  acct: string,
  userId: string,
  teamList: Team[],
  count: number,
): { sessions: Session[]; browsers: Browser[] } {
  const statuses = ['completed', 'active', 'error'];
  const out: Session[] = [];
  const browsers: Browser[] = [];
  for (let i = 0; i < count; i++) {
    const label = `${acct}:session${i}`;
    const id = uuidFrom(label);
    const start = day('2026-11-18T08:00:00.000Z', i);
    const browserId = uuidFrom(`${label}:browser`);
    const task = `Find the cheapest kettle and open its checkout page (${acct} #${i + 1})`;
    const msgs = messages(label, task, start, 25);
    const status = statuses[i % statuses.length]!;
    out.push({
      session_id: id,
      status,
      browser_id: browserId,
      team_id: teamList[4 + i]!.team_id,
      intent_id: uuidFrom(`${label}:intent`),
      name: `${acct === 'demo' ? 'Demo' : 'Other'} session ${i + 1}`,
      task: [{ role: 'user', content: task }],
      task_result: status === 'completed' ? { summary: 'Cheapest kettle found', price: 19.99 } : {},
      messages: msgs,
      duration: 25 * 37,
      error_message: status === 'error' ? 'browser crashed' : '',
      attachments: [],
      platform: 'engine',
      visibility: 'private',
      created_at: start.toISOString(),
      updated_at: msgs.at(-1)!.created_at,
    });
    browsers.push(
      makeBrowser(
        browserId,
        userId,
        id,
        start.toISOString(),
        status === 'active' ? 'open' : 'closed',
        3,
      ),
    );
    // The first session also had an earlier browser, so browser lists have more than one item.
    if (i === 0)
      browsers.push(
        makeBrowser(uuidFrom(`${label}:browser-old`), userId, id, start.toISOString(), 'closed', 2),
      );
  }
  return { sessions: out, browsers };
}

function calls(acct: string, keyNames: string[], sessionIds: string[]): CallRecord[] {
  const r = rng(`${acct}:calls`);
  const names = [...keyNames, `${acct}-legacy`]; // a deleted key still shows up in history
  return Array.from({ length: 57 }, (_, i) => {
    // One call per distinct day, first on 2026-09-01 and last on 2026-11-20, so date-range edges are testable.
    const at = day('2026-09-01T00:00:00.000Z', Math.round((i * 80) / 56));
    at.setUTCHours(
      Math.floor(r() * 24),
      Math.floor(r() * 60),
      Math.floor(r() * 60),
      Math.floor(r() * 1000),
    );
    const status =
      i < STATES.length ? STATES[i]! : r() < 0.6 ? 'success' : STATES[1 + Math.floor(r() * 3)]!;
    const duration = 5 + Math.floor(r() * 600);
    const used = r() < 0.3 ? 1 + Math.floor(r() * 3) : 0;
    const bandwidth = round4(r() * 50);
    const c = {
      server_traffic: round4(r() * 0.05),
      token: round4(r() * 2),
      browser: round4(duration * 0.001),
      auto_captcha: round4(used * 0.02),
      ip_proxy_bandwidth: round4(bandwidth * 0.01),
    };
    const total = round4(
      c.server_traffic + c.token + c.browser + c.auto_captcha + c.ip_proxy_bandwidth,
    );
    return {
      session_id: i < sessionIds.length ? sessionIds[i]! : uuidFrom(`${acct}:call${i}`),
      api_key_name: names[Math.floor(r() * names.length)]!,
      browser_id: uuidFrom(`${acct}:call${i}:browser`),
      platform: PLATFORMS[Math.floor(r() * 3)]!,
      duration,
      auth_captcha: { has_used: used > 0, used_count: used },
      ip_proxy_bandwidth: bandwidth,
      cost: { total_credit: total, ...c },
      status,
      created_at: at.toISOString(),
    };
  });
}

function account(
  acct: string,
  display: string,
  userId: string,
  keys: ApiKey[],
  sessionCount: number,
): Account {
  const teamList = teams(acct, display, userId);
  const s = sessions(acct, userId, teamList, sessionCount);
  const callList = calls(
    acct,
    keys.map((k) => k.name),
    s.sessions.map((x) => x.session_id),
  );
  return {
    user_id: userId,
    display_name: display,
    keys,
    teams: teamList,
    calls: callList,
    ...s,
    dashboard: seedDashboard(acct),
  };
}

const key = (id: number, name: string, api_key: string, created: string, used: string): ApiKey => ({
  id,
  name,
  api_key,
  created_at: created,
  last_used_at: used,
});

/** Fresh seeded accounts (new objects every call, so a reset discards all changes). */
export function seedAccounts(): Account[] {
  return [
    account(
      'demo',
      'Demo',
      DEMO_USER_ID,
      [
        key(
          1,
          'default',
          DEMO_PLATFORM_KEY,
          '2026-08-01T10:00:00.000Z',
          '2026-11-20T18:00:00.000Z',
        ),
        key(
          2,
          'ci-runner',
          DEMO_SECOND_KEY,
          '2026-08-15T10:00:00.000Z',
          '2026-11-19T07:30:00.000Z',
        ),
      ],
      3,
    ),
    account(
      'other',
      'Other',
      OTHER_USER_ID,
      [
        key(
          3,
          'other-default',
          OTHER_PLATFORM_KEY,
          '2026-08-05T10:00:00.000Z',
          '2026-11-20T12:00:00.000Z',
        ),
      ],
      2,
    ),
  ];
}

/** First id handed to keys created at run time. */
export const FIRST_FREE_KEY_ID = 4;
