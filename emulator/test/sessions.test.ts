// Routes 4.8: agents, sessions, messages and browsers (all x-api-key).
import { describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, OTHER_PLATFORM_KEY, SYSTEM_USER_ID } from '../seed';
import type {
  Agent,
  Browser,
  BrowserList,
  BrowserPageList,
  Message,
  MessagePage,
  NewSession,
  Paged,
  Session,
} from '../types';
import { at, first, seeded, useEmulator, xKey } from './client';

const emu = useEmulator({ resetEach: true });
const demo = xKey(DEMO_PLATFORM_KEY);
const other = xKey(OTHER_PLATFORM_KEY);

const get = <T>(path: string, headers = demo) => emu.data<T>('GET', path, { headers });
const notFound = async (method: string, path: string, what: string, headers = demo) =>
  expect(await emu.failure(method, path, { headers }, { status: 200, code: 10404 })).toBe(
    `${what} not found`,
  );
const badInput = (method: string, path: string, body?: unknown) =>
  emu.failure(method, path, body === undefined ? { headers: demo } : { headers: demo, body }, {
    status: 400,
    code: 10400,
  });

const team = first(seeded.demo.teams);
/** The first seeded session: 25 messages, two browsers (3 and 2 pages). */
const session = first(seeded.demo.sessions);
const messages = session.messages;
const sid = session.session_id;

describe('agents', () => {
  it('pages every agent of every team, 10 by default', async () => {
    const all = seeded.demo.teams.flatMap((t) => t.agents);
    const list = await get<Paged<Agent>>('/agent/lists');
    expect(list).toMatchObject({ page_num: 1, page_size: 10, total: all.length });
    expect(list.total).toBeGreaterThan(20);
    expect(list.data).toEqual(all.slice(0, 10));
  });

  it('filters agent_type system / user, and refuses other values', async () => {
    const all = (await get<Paged<Agent>>('/agent/lists?page_size=100')).total;
    const system = await get<Paged<Agent>>('/agent/lists?agent_type=system&page_size=100');
    const user = await get<Paged<Agent>>('/agent/lists?agent_type=user&page_size=100');
    expect(system.total).toBeGreaterThan(0);
    expect(system.data.every((a) => a.user_id === SYSTEM_USER_ID)).toBe(true);
    expect(user.data.every((a) => a.user_id === seeded.demo.user_id)).toBe(true);
    expect(system.total + user.total).toBe(all);
    await badInput('GET', '/agent/lists?agent_type=robot');
  });

  it('answers agent info, and "not found" for unknown or other-account agents', async () => {
    const agent = first(team.agents);
    expect(await get<Agent>(`/agent/info/${agent.agent_id}`)).toEqual(agent);
    await notFound('GET', '/agent/info/nope', 'agent');
    await notFound('GET', `/agent/info/${agent.agent_id}`, 'agent', other);
  });
});

describe('sessions', () => {
  it('creates an active session with an open browser, readable at once', async () => {
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: demo,
      body: { team_id: team.team_id, task: 'Find a kettle', title: 'Kettle' },
    });
    expect(session_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const made = await get<Session>(`/session/info/${session_id}`);
    expect(made).toMatchObject({
      session_id,
      status: 'active',
      team_id: team.team_id,
      name: 'Kettle',
      task: [{ role: 'user', content: 'Find a kettle' }],
      messages: [],
    });
    const browser = await get<Browser>(`/browser/info/${made.browser_id}`);
    expect(browser).toMatchObject({ session_id, status: 'open' });
    expect(browser.pages).toHaveLength(1);
    await notFound('GET', `/session/info/${session_id}`, 'session', other);
  });

  it('names a session from its task when no title is given', async () => {
    const task = 'A'.repeat(80);
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: demo,
      body: { team_id: team.team_id, task },
    });
    expect((await get<Session>(`/session/info/${session_id}`)).name).toBe('A'.repeat(60));
    const bare = await emu.data<NewSession>('POST', '/session/create', {
      headers: demo,
      body: { team_id: team.team_id },
    });
    expect((await get<Session>(`/session/info/${bare.session_id}`)).name).toBe('Untitled session');
  });

  it("takes the current client's shape: a task, no team (PLATFORM.md, version 0.3.2)", async () => {
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: demo,
      body: { task: 'Reply to mentions', intent_id: 'intent_1', mode: 'marketing', platform: 'x' },
    });
    expect(await get<Session>(`/session/info/${session_id}`)).toMatchObject({
      team_id: '',
      intent_id: 'intent_1',
      platform: 'x',
      mode: 'marketing',
      name: 'Reply to mentions',
    });
    await badInput('POST', '/session/create', { task: 'x', extra: [1] });
  });

  it('refuses a session with neither team nor task, or for another account’s team', async () => {
    await badInput('POST', '/session/create', {});
    await badInput('POST', '/session/create', { team_id: 5 });
    await badInput('POST', '/session/create', 'not json');
    const msg = await emu.failure(
      'POST',
      '/session/create',
      { headers: demo, body: { team_id: first(seeded.other.teams).team_id } },
      { status: 200, code: 10404 },
    );
    expect(msg).toBe('team not found');
  });

  it('answers a seeded session whole', async () => {
    expect(await get<Session>(`/session/info/${sid}`)).toEqual(session);
    await notFound('GET', '/session/info/nope', 'session');
  });

  it('renames a session (the live client also sends session_id)', async () => {
    expect(
      await emu.data('PUT', `/session/info/${sid}`, {
        headers: demo,
        body: { title: 'Renamed', session_id: sid },
      }),
    ).toEqual({});
    const renamed = await get<Session>(`/session/info/${sid}`);
    expect(renamed.name).toBe('Renamed');
    expect(renamed.updated_at > session.updated_at).toBe(true);
    await badInput('PUT', `/session/info/${sid}`, {});
    const msg = await emu.failure(
      'PUT',
      `/session/info/${sid}`,
      { headers: other, body: { title: 'x' } },
      { status: 200, code: 10404 },
    );
    expect(msg).toBe('session not found');
  });
});

describe('messages', () => {
  const list = (query: string) =>
    get<MessagePage>(`/session/message/lists?session_id=${sid}${query}`);

  it('pages 25 messages, 20 by default', async () => {
    const page1 = await list('');
    expect(page1).toMatchObject({
      total_count: 25,
      page_num: 1,
      page_size: 20,
      total_page: 2,
      has_next: true,
      has_prev: false,
    });
    expect(page1.messages).toEqual(messages.slice(0, 20));
    const page2 = await list('&page_num=2');
    expect(page2).toMatchObject({ has_next: false, has_prev: true });
    expect(page2.messages).toEqual(messages.slice(20));
  });

  it('filters by role (assistant also matches agent) and by content, ignoring case', async () => {
    const users = await list('&role=user&page_size=100');
    expect(users.total_count).toBeGreaterThan(0);
    expect(users.messages.every((m) => m.source === 'user')).toBe(true);
    const assistant = await list('&role=assistant&page_size=100');
    expect(assistant.total_count).toBeGreaterThan(0);
    expect(assistant.messages.every((m) => ['assistant', 'agent'].includes(m.source))).toBe(true);
    const kettle = await list('&content=KETTLE&page_size=100');
    expect(kettle.total_count).toBeGreaterThan(0);
    expect(kettle.messages.every((m) => /kettle/i.test(m.content))).toBe(true);
    expect((await list('&content=zzz-nothing')).total_count).toBe(0);
  });

  it('filters by time, both ends inclusive', async () => {
    const from = at(messages, 3).created_at;
    const to = at(messages, 7).created_at;
    const range = await list(`&from_timestamp=${from}&to_timestamp=${to}`);
    expect(range.messages).toEqual(messages.slice(3, 8));
    await badInput('GET', `/session/message/lists?session_id=${sid}&from_timestamp=yesterday`);
  });

  it('needs a known session_id', async () => {
    await badInput('GET', '/session/message/lists');
    await notFound('GET', '/session/message/lists?session_id=nope', 'session');
    await notFound('GET', `/session/message/lists?session_id=${sid}`, 'session', other);
  });

  it('answers the inclusive range between two messages, whichever comes first', async () => {
    const a = at(messages, 2).message_id;
    const b = at(messages, 5).message_id;
    const path = (x: string, y: string) =>
      `/session/message/between?session_id=${sid}&from_message_id=${x}&to_message_id=${y}`;
    expect(await get<Message[]>(path(a, b))).toEqual(messages.slice(2, 6));
    expect(await get<Message[]>(path(b, a))).toEqual(messages.slice(2, 6));
    expect(await get<Message[]>(path(a, a))).toEqual(messages.slice(2, 3));
    await notFound('GET', path('x', b), 'message');
    await badInput('GET', `/session/message/between?session_id=${sid}&from_message_id=${a}`);
  });
});

describe('browsers', () => {
  const browsers = seeded.demo.browsers.filter((b) => b.session_id === sid);
  const browser = first(browsers);

  it('lists browsers, all or per session, 20 by default', async () => {
    const all = await get<BrowserList>('/browser/lists');
    expect(all.total).toBe(seeded.demo.browsers.length);
    expect(all.browsers).toEqual(seeded.demo.browsers.slice(0, 20));
    const mine = await get<BrowserList>(`/browser/lists?session_id=${sid}&page_size=1`);
    expect(mine.total).toBe(2);
    expect(mine.browsers).toEqual([browser]);
    expect(
      (await get<BrowserList>(`/browser/lists?session_id=${sid}&page_num=2&page_size=1`)).browsers,
    ).toEqual([at(browsers, 1)]);
    await notFound('GET', `/browser/lists?session_id=${sid}`, 'session', other);
  });

  it('answers browser info with its pages', async () => {
    const info = await get<Browser>(`/browser/info/${browser.browser_id}`);
    expect(info).toEqual(browser);
    expect(info.pages).toHaveLength(3);
    expect(typeof first(info.pages).ws_debugger_url).toBe('string');
    await notFound('GET', '/browser/info/nope', 'browser');
    await notFound('GET', `/browser/info/${browser.browser_id}`, 'browser', other);
  });

  it('pages browser pages, and needs a known browser_id', async () => {
    const pages = await get<BrowserPageList>(
      `/browser/page/lists?browser_id=${browser.browser_id}&page_size=2`,
    );
    expect(pages.total).toBe(3);
    expect(pages.pages).toEqual(browser.pages.slice(0, 2));
    await badInput('GET', '/browser/page/lists');
    await notFound('GET', '/browser/page/lists?browser_id=nope', 'browser');
  });

  it('releases a browser (closed), only the account’s own', async () => {
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: demo,
      body: { team_id: team.team_id },
    });
    const { browser_id } = await get<Session>(`/session/info/${session_id}`);
    await notFound('DELETE', `/browser/release/${browser_id}`, 'browser', other);
    expect((await get<Browser>(`/browser/info/${browser_id}`)).status).toBe('open');
    expect(await emu.data('DELETE', `/browser/release/${browser_id}`, { headers: demo })).toEqual(
      {},
    );
    expect((await get<Browser>(`/browser/info/${browser_id}`)).status).toBe('closed');
    await notFound('DELETE', '/browser/release/nope', 'browser');
  });
});
