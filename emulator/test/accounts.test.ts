// Routes 4.1–4.6: API keys, filter values and teams, per account.
import { describe, expect, it } from 'vitest';
import {
  DEMO_PLATFORM_KEY,
  DEMO_SECOND_KEY,
  FIRST_FREE_KEY_ID,
  OTHER_PLATFORM_KEY,
  SYSTEM_USER_ID,
} from '../seed';
import type { ApiKey, FilterValues, NewApiKey, Paged, Team } from '../types';
import { auth, first, seeded, useEmulator } from './client';

const emu = useEmulator({ resetEach: true });
const demo = auth(DEMO_PLATFORM_KEY);
const other = auth(OTHER_PLATFORM_KEY);

const keys = (query = '', headers = demo) =>
  emu.data<Paged<ApiKey>>('GET', `/user/apikey/lists${query}`, { headers });
const teams = (query = '', headers = demo) =>
  emu.data<Paged<Team>>('GET', `/team/lists${query}`, { headers });

describe('4.1–4.3 API keys', () => {
  it('lists the account’s seeded keys, default page size 10', async () => {
    const list = await keys();
    expect(list).toMatchObject({ page_num: 1, page_size: 10, total: 2, total_page: 1 });
    expect(list.data.map((k) => [k.id, k.name, k.api_key])).toEqual([
      [1, 'default', DEMO_PLATFORM_KEY],
      [2, 'ci-runner', DEMO_SECOND_KEY],
    ]);
    const others = await keys('', other);
    expect(others.data.map((k) => k.api_key)).toEqual([OTHER_PLATFORM_KEY]);
  });

  it('creates a key that works at once and pages after the seeded ones', async () => {
    const { api_key } = await emu.data<NewApiKey>('POST', '/user/apikey/new', {
      headers: demo,
      body: { name: 'created' },
    });
    expect(api_key).toMatch(/^sk-emu-[0-9a-f]{40}$/);
    await emu.data('GET', '/team/lists', { headers: auth(api_key) });
    const page2 = await keys('?page_size=2&page_num=2');
    expect(page2).toMatchObject({ page_num: 2, page_size: 2, total: 3, total_page: 2 });
    expect(page2.data).toEqual([
      expect.objectContaining({ id: FIRST_FREE_KEY_ID, name: 'created', api_key }),
    ]);
    const made = first(page2.data);
    expect(Date.parse(made.created_at)).toBeGreaterThan(Date.now() - 10_000);
  });

  it('refuses a new key without a name, or with a body that is not a JSON object', async () => {
    for (const body of [{}, { name: '' }, { name: 7 }, '{nope', '[1]']) {
      await emu.failure(
        'POST',
        '/user/apikey/new',
        { headers: demo, body },
        { status: 400, code: 10400 },
      );
    }
    await emu.failure('POST', '/user/apikey/new', { headers: demo }, { status: 400, code: 10400 });
    expect((await keys()).total).toBe(2);
  });

  it('deletes an own key, after which it is a 401 and a second delete is "not found"', async () => {
    expect(await emu.data('DELETE', '/user/apikey/delete/2', { headers: demo })).toEqual({});
    expect((await emu.fetch('GET', '/team/lists', { headers: auth(DEMO_SECOND_KEY) })).status).toBe(
      401,
    );
    const msg = await emu.failure(
      'DELETE',
      '/user/apikey/delete/2',
      { headers: demo },
      { status: 200, code: 10404 },
    );
    expect(msg).toBe('api key not found');
    expect((await keys()).data.map((k) => k.id)).toEqual([1]);
  });

  it('treats another account’s key id as not found, and a non-integer id as bad input', async () => {
    await emu.failure(
      'DELETE',
      '/user/apikey/delete/3',
      { headers: demo },
      { status: 200, code: 10404 },
    );
    await emu.data('GET', '/team/lists', { headers: other });
    await emu.failure(
      'DELETE',
      '/user/apikey/delete/abc',
      { headers: demo },
      { status: 400, code: 10400 },
    );
  });

  it('updates last_used_at when a key is used', async () => {
    const before = first((await keys('', auth(DEMO_SECOND_KEY))).data.filter((k) => k.id === 2));
    expect(Date.now() - Date.parse(before.last_used_at)).toBeLessThan(10_000);
    const seededKey = seeded.demo.keys.find((k) => k.id === 2);
    expect(seededKey?.last_used_at).toBe('2026-11-19T07:30:00.000Z');
  });
});

describe('4.4 call filter values', () => {
  it('names the keys found in the call history (a deleted key too), the platforms and states', async () => {
    const values = await emu.data<FilterValues>('GET', '/user/call/filter_values', {
      headers: demo,
    });
    expect(values.platforms).toEqual(['engine', 'extension', 'api']);
    expect(values.states).toEqual(['success', 'failed', 'running', 'cancelled']);
    expect(values.api_key_names).toEqual([...values.api_key_names].sort());
    expect(values.api_key_names).toEqual(
      expect.arrayContaining(['default', 'ci-runner', 'demo-legacy']),
    );
    const expected = [...new Set(seeded.demo.calls.map((c) => c.api_key_name))].sort();
    expect(values.api_key_names).toEqual(expected);
  });
});

describe('4.5–4.6 teams', () => {
  it('pages 13 teams, 10 by default', async () => {
    const list = await teams();
    expect(list).toMatchObject({ page_num: 1, page_size: 10, total: 13, total_page: 2 });
    expect(list.data).toHaveLength(10);
    expect((await teams('?page_num=2')).data).toHaveLength(3);
    expect((await teams('?page_num=3')).data).toEqual([]);
  });

  it('answers complete team records with the model key hidden', async () => {
    const team = first((await teams()).data);
    expect(team).toEqual(first(seeded.demo.teams));
    expect(team.name.startsWith('Demo: ')).toBe(true);
    expect(team.model.api_key).toBe('');
    expect(team.deleted_at).toBe(0);
    expect(team.agents.length).toBeGreaterThan(0);
    expect(team.agents.every((a) => a.model.api_key === '')).toBe(true);
  });

  it('filters by team_type: 4 system teams, 9 user teams', async () => {
    const system = await teams('?team_type=system&page_size=100');
    const user = await teams('?team_type=user&page_size=100');
    expect(system.total).toBe(4);
    expect(system.data.every((t) => t.user_id === SYSTEM_USER_ID)).toBe(true);
    expect(user.total).toBe(9);
    expect(user.data.every((t) => t.user_id === seeded.demo.user_id)).toBe(true);
    expect((await teams('?team_type=all')).total).toBe(13);
    expect((await teams('?team_type=')).total).toBe(13);
  });

  it('refuses bad paging and a bad team_type with 400 / 10400; ignores unknown params', async () => {
    for (const query of [
      'team_type=x',
      'page_size=0',
      'page_size=101',
      'page_size=abc',
      'page_num=0',
      'page_num=-1',
      'page_num=1.5',
    ]) {
      await emu.failure(
        'GET',
        `/team/lists?${query}`,
        { headers: demo },
        { status: 400, code: 10400 },
      );
    }
    expect((await teams('?page_size=100&whatever=1')).data).toHaveLength(13);
    expect((await teams('?page_size=1')).total_page).toBe(13);
  });

  it('keeps accounts apart', async () => {
    const demoTeams = await teams('?page_size=100');
    const otherTeams = await teams('?page_size=100', other);
    expect(otherTeams.total).toBe(13);
    expect(otherTeams.data.every((t) => t.name.startsWith('Other: '))).toBe(true);
    const demoIds = new Set(demoTeams.data.map((t) => t.team_id));
    expect(otherTeams.data.some((t) => demoIds.has(t.team_id))).toBe(false);
  });

  it('answers team info for an own team, and "not found" for another account’s or an unknown id', async () => {
    const team = first(seeded.demo.teams);
    expect(await emu.data<Team>('GET', `/team/info/${team.team_id}`, { headers: demo })).toEqual(
      team,
    );
    for (const headers of [other, demo]) {
      const id = headers === other ? team.team_id : 'no-such-team';
      const msg = await emu.failure(
        'GET',
        `/team/info/${id}`,
        { headers },
        { status: 200, code: 10404 },
      );
      expect(msg).toBe('team not found');
    }
  });
});
