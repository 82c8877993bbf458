// Route 4.7: call history filters, sorting, paging and input bounds.
import { describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, OTHER_PLATFORM_KEY, PLATFORMS, STATES } from '../seed';
import type { CallRecord, Paged } from '../types';
import { at, first, seeded, useEmulator, xKey } from './client';

const emu = useEmulator();
const calls = (query = '', key = DEMO_PLATFORM_KEY) =>
  emu.data<Paged<CallRecord>>('GET', `/user/call/lists${query}`, { headers: xKey(key) });

const isSorted = <T>(values: T[], inOrder: (a: T, b: T) => boolean) =>
  values.every((v, i) => i === 0 || inOrder(at(values, i - 1), v));

describe('4.7 call history', () => {
  it('has 57 records; defaults are page 1 of 10, newest first', async () => {
    const all = await calls('?page_size=100');
    expect(all.total).toBe(57);
    expect(all.data).toHaveLength(57);
    const page = await calls();
    expect(page).toMatchObject({ page_num: 1, page_size: 10, total: 57, total_page: 6 });
    expect(page.data).toEqual(all.data.slice(0, 10));
    expect(isSorted(all.data, (a, b) => a.created_at >= b.created_at)).toBe(true);
    expect((await calls('?page_num=6')).data).toEqual(all.data.slice(50));
  });

  it('sorts ascending by date, and by total_cost either way', async () => {
    const asc = (await calls('?order=asc&page_size=100')).data;
    expect(first(asc).created_at.startsWith('2026-09-01')).toBe(true);
    expect(at(asc, 56).created_at.startsWith('2026-11-20')).toBe(true);
    expect(isSorted(asc, (a, b) => a.created_at <= b.created_at)).toBe(true);
    const cheap = (await calls('?order_field=total_cost&order=asc&page_size=100')).data;
    expect(isSorted(cheap, (a, b) => a.cost.total_credit <= b.cost.total_credit)).toBe(true);
    const dear = (await calls('?order_field=total_cost&page_size=100')).data;
    expect(isSorted(dear, (a, b) => a.cost.total_credit >= b.cost.total_credit)).toBe(true);
  });

  it('pages stably: the pages of a sort put together are the whole sorted list', async () => {
    const whole = (await calls('?order_field=total_cost&page_size=100')).data;
    const pieces: CallRecord[] = [];
    for (let n = 1; n <= 6; n++)
      pieces.push(...(await calls(`?order_field=total_cost&page_num=${n}`)).data);
    expect(pieces).toEqual(whole);
  });

  it.each(PLATFORMS)('filters platform=%s; the platforms partition the history', async (p) => {
    const list = await calls(`?platform=${p}&page_size=100`);
    expect(list.total).toBeGreaterThan(0);
    expect(list.data.every((r) => r.platform === p)).toBe(true);
    expect(list.total).toBe(seeded.demo.calls.filter((r) => r.platform === p).length);
  });

  it('platform=all is everything', async () => {
    expect((await calls('?platform=all')).total).toBe(57);
  });

  it.each(STATES)('filters status=%s', async (s) => {
    const list = await calls(`?status=${s}&page_size=100`);
    expect(list.total).toBeGreaterThan(0);
    expect(list.data.every((r) => r.status === s)).toBe(true);
  });

  it('filters by api_key_name, a deleted key’s name included', async () => {
    for (const name of ['ci-runner', 'demo-legacy']) {
      const list = await calls(`?api_key_name=${name}&page_size=100`);
      expect(list.total).toBeGreaterThan(0);
      expect(list.data.every((r) => r.api_key_name === name)).toBe(true);
    }
    expect((await calls('?api_key_name=nobody')).total).toBe(0);
    expect((await calls('?api_key_name=nobody')).total_page).toBe(0);
  });

  it('filters by date, both ends inclusive', async () => {
    expect((await calls('?start_date=2026-09-01&end_date=2026-09-01')).total).toBe(1);
    expect((await calls('?start_date=2026-11-20')).total).toBe(1);
    expect((await calls('?end_date=2026-09-01')).total).toBe(1);
    const october = await calls('?start_date=2026-10-01&end_date=2026-10-31&page_size=100');
    expect(october.total).toBe(
      seeded.demo.calls.filter((r) => r.created_at.startsWith('2026-10')).length,
    );
    expect(october.total).toBeGreaterThan(10);
    expect(october.data.every((r) => r.created_at.startsWith('2026-10'))).toBe(true);
  });

  it('combines filters', async () => {
    const list = await calls('?platform=api&status=success&start_date=2026-10-01&page_size=100');
    const expected = seeded.demo.calls.filter(
      (r) => r.platform === 'api' && r.status === 'success' && r.created_at >= '2026-10-01',
    );
    expect(list.total).toBe(expected.length);
    expect(list.data.every((r) => r.platform === 'api' && r.status === 'success')).toBe(true);
  });

  it.each([
    'start_date=2026-02-30',
    'start_date=2026-13-01',
    'end_date=20261101',
    'start_date=2026-11-02&end_date=2026-11-01',
    'order=up',
    'order_field=x',
    'platform=web',
    'status=ok',
    'page_num=0',
    'page_size=101',
  ])('refuses %s with 400 / 10400', async (query) => {
    await emu.failure(
      'GET',
      `/user/call/lists?${query}`,
      { headers: xKey(DEMO_PLATFORM_KEY) },
      { status: 400, code: 10400 },
    );
  });

  it('keeps accounts apart', async () => {
    const demoIds = new Set((await calls('?page_size=100')).data.map((r) => r.session_id));
    const other = await calls('?page_size=100', OTHER_PLATFORM_KEY);
    expect(other.total).toBe(57);
    expect(other.data.some((r) => demoIds.has(r.session_id))).toBe(false);
  });
});
