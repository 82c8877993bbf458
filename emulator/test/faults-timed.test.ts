// The fault modes for resilience work: Retry-After on a status, one platform
// key only, a lane, for a time, flapping, one request in N, and a write whose
// answer is lost after the platform acted; and lanes themselves.
import { describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, DEMO_SECOND_KEY } from '../seed';
import { auth, useEmulator, xKey } from './client';

const emu = useEmulator({ resetEach: true });
const teams = (key = DEMO_PLATFORM_KEY, prefix = '') =>
  emu.fetch('GET', `${prefix}/team/lists`, { headers: auth(key) });
const stats = () =>
  emu.control<{ requests: Record<string, number>; sessions: number }>('GET', '/stats');

describe('timed and targeted faults', () => {
  it('a status fault can carry Retry-After', async () => {
    await emu.control('POST', '/faults', { kind: 'status', status: 503, retry_after: 5 });
    const r = await teams();
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
  });

  it('matches one platform key only', async () => {
    await emu.control('POST', '/faults', {
      kind: 'status',
      status: 429,
      retry_after: 2,
      platform_key: DEMO_SECOND_KEY,
      for_ms: 60_000,
    });
    expect((await teams(DEMO_PLATFORM_KEY)).status).toBe(200);
    expect((await teams(DEMO_SECOND_KEY)).status).toBe(429);
    expect((await teams(DEMO_SECOND_KEY)).status).toBe(429);
  });

  it('for_ms: every request fails until the time is up, then none', async () => {
    await emu.control('POST', '/faults', { kind: 'status', status: 500, for_ms: 300 });
    for (let i = 0; i < 3; i++) expect((await teams()).status).toBe(500);
    await new Promise((r) => setTimeout(r, 350));
    expect((await teams()).status).toBe(200);
  });

  it('flap_ms alternates failing and normal periods', async () => {
    await emu.control('POST', '/faults', {
      kind: 'status',
      status: 503,
      for_ms: 10_000,
      flap_ms: 200,
    });
    expect((await teams()).status).toBe(503);
    await new Promise((r) => setTimeout(r, 250));
    expect((await teams()).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await teams()).status).toBe(503);
  });

  it('every: fails one request in N', async () => {
    await emu.control('POST', '/faults', { kind: 'status', status: 502, for_ms: 10_000, every: 2 });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await teams()).status);
    expect(statuses).toEqual([502, 200, 502, 200, 502, 200]);
  });

  it('lost_answer: the write is carried out, then the connection is cut', async () => {
    const before = (await stats()).sessions;
    await emu.control('POST', '/faults', { kind: 'lost_answer', path: '/session/create' });
    const team = (
      await emu.data<{ data: { team_id: string }[] }>('GET', '/team/lists', {
        headers: auth(DEMO_PLATFORM_KEY),
      })
    ).data[0]?.team_id;
    await expect(
      emu.fetch('POST', '/session/create', {
        headers: xKey(DEMO_PLATFORM_KEY),
        body: { team_id: team, task: 'lost' },
      }),
    ).rejects.toThrow(/fetch failed/);
    expect((await stats()).sessions).toBe(before + 1);
  });

  it('rejects timing fields it cannot use', async () => {
    for (const bad of [
      { kind: 'html', retry_after: 5 },
      { kind: 'status', flap_ms: 100 },
      { kind: 'status', for_ms: 0 },
      { kind: 'status', every: 0 },
      { kind: 'status', lane: 'no spaces' },
    ]) {
      const r = await emu.fetch('POST', '/__emulator/faults', { body: bad });
      expect(r.status).toBe(400);
    }
  });
});

describe('lanes', () => {
  it('/__lane/<name>/… is the same platform, counted and faulted per lane', async () => {
    await emu.control('POST', '/faults', { kind: 'status', status: 500, lane: 'b', for_ms: 5000 });
    expect((await teams(DEMO_PLATFORM_KEY, '/__lane/a')).status).toBe(200);
    expect((await teams(DEMO_PLATFORM_KEY, '/__lane/b')).status).toBe(500);
    expect((await teams(DEMO_PLATFORM_KEY)).status).toBe(200);
    expect((await stats()).requests).toEqual({ a: 1, b: 1, '': 1 });
  });
});
