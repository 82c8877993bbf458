// The current client's operations (PLATFORM.md, version 0.3.2): dashboard products,
// reports, categories, research results, marketing data and uploads (all x-api-key).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CATEGORIES, opaqueIdFrom } from '../dashboard-seed';
import { DEMO_PLATFORM_KEY, OTHER_PLATFORM_KEY } from '../seed';
import type {
  CategoryTree,
  NewProduct,
  NewSession,
  ProductInfo,
  Report,
  UploadedFile,
} from '../types';
import { auth, first, seeded, useEmulator, xKey } from './client';

const emu = useEmulator({ resetEach: true });
const demo = xKey(DEMO_PLATFORM_KEY);
const other = xKey(OTHER_PLATFORM_KEY);
const seededProduct = opaqueIdFrom('prod', 'demo:product:1');
const seededReport = opaqueIdFrom('rep', 'demo:report:1');
const seededQuery = opaqueIdFrom('qry', 'demo:query:1');

const get = <T>(path: string, headers = demo) => emu.data<T>('GET', path, { headers });
const notFound = (path: string, what: string, headers = demo) =>
  emu
    .failure('GET', path, { headers }, { status: 200, code: 10404 })
    .then((msg) => expect(msg).toBe(`${what} not found`));

describe('products and reports', () => {
  it('analyses a new product: pending, then completed with a report on a later read', async () => {
    const made = await emu.data<NewProduct>('POST', '/dashboard/product/create', {
      headers: demo,
      body: {
        product: 'A kettle',
        attachments: [{ file_name: 'k.png', file_url: 'https://f/k.png' }],
      },
    });
    expect(made).toMatchObject({ product_name: 'A kettle', status: 'pending' });
    expect(made.product_id).toMatch(/^prod_[0-9a-f]{20}$/);
    const path = `/dashboard/product/candidates/${made.product_id}/info`;
    expect((await get<ProductInfo>(path)).status).toBe('pending');
    const done = await get<ProductInfo>(path);
    expect(done.status).toBe('completed');
    const report = await get<Report>(`/dashboard/report/info/${done.analysis_result.report_id}`);
    expect(report.product_name).toBe('A kettle');
    await notFound(path, 'product', other);
  });

  it('refuses a product without text, or with bad attachments; and keys in Authorization', async () => {
    for (const body of [
      {},
      { product: ' ' },
      { product: 'x', attachments: [{ file_name: 'a' }] },
    ]) {
      await emu.failure(
        'POST',
        '/dashboard/product/create',
        { headers: demo, body },
        { status: 400, code: 10400 },
      );
    }
    expect(
      (await emu.fetch('GET', '/dashboard/categories', { headers: auth(DEMO_PLATFORM_KEY) }))
        .status,
    ).toBe(401);
  });

  it('answers the seeded report, and changes the fields a client names', async () => {
    expect((await get<Report>(`/dashboard/report/info/${seededReport}`)).report_id).toBe(
      seededReport,
    );
    const updated = await emu.data<Report>('POST', `/dashboard/report/update/${seededReport}`, {
      headers: demo,
      body: { keywords: ['a'], related_industries: [{ level1: { id: 2 }, level2: [201] }] },
    });
    expect(updated).toMatchObject({ keywords: ['a'], related_industries: [{ level1: { id: 2 } }] });
    await emu.failure(
      'POST',
      `/dashboard/report/update/${seededReport}`,
      { headers: demo, body: { report_id: 'x' } },
      { status: 400, code: 10400 },
    );
    await notFound(`/dashboard/report/info/${seededReport}`, 'report', other);
  });

  it('lists the category taxonomy', async () => {
    const categories = await get<CategoryTree[]>('/dashboard/categories');
    expect(categories).toEqual(CATEGORIES);
    expect(first(categories).subcategories.every((s) => s.level === 2)).toBe(true);
  });

  it("answers a query's research results, per account", async () => {
    const results = await get<{ total: number; posts: unknown[] }>(
      `/dashboard/product/query/results/${seededQuery}/lists`,
    );
    expect(results.total).toBe(results.posts.length);
    await notFound(`/dashboard/product/query/results/${seededQuery}/lists`, 'query', other);
    expect(seeded.demo.dashboard.products[0]?.info.product_id).toBe(seededProduct);
  });
});

describe('sessions of the current client', () => {
  it("answers a session's marketing data, filtered by type", async () => {
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: demo,
      body: { task: 'Engage', mode: 'marketing' },
    });
    const all = await get<{ items: { type: string }[] }>(`/session/marketing/data/${session_id}`);
    expect(all.items.map((i) => i.type)).toEqual(['reply', 'like', 'retweet', 'tweet']);
    const likes = await get<{ items: { type: string }[] }>(
      `/session/marketing/data/${session_id}?type=like`,
    );
    expect(likes.items.map((i) => i.type)).toEqual(['like']);
    await emu.failure(
      'GET',
      `/session/marketing/data/${session_id}?type=share`,
      { headers: demo },
      { status: 400, code: 10400 },
    );
  });

  it('stores uploaded files, named by their content, and attaches them to a session', async () => {
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: demo,
      body: { task: 'Read these' },
    });
    const form = new FormData();
    form.append('files', new Blob(['hello']), 'a.txt');
    form.append('session_id', session_id);
    const res = await fetch(`${emu.url}/session/upload`, {
      method: 'POST',
      headers: demo,
      body: form,
    });
    const body = (await res.json()) as { code: number; data: UploadedFile[] };
    const digest = createHash('sha256').update('hello').digest('hex').slice(0, 16);
    expect(body).toMatchObject({
      code: 0,
      data: [{ file_name: 'a.txt', file_url: `https://files.emulator.invalid/${digest}/a.txt` }],
    });
    const session = await get<{ attachments: UploadedFile[] }>(`/session/info/${session_id}`);
    expect(session.attachments).toEqual(body.data);
    const none = await fetch(`${emu.url}/session/upload`, {
      method: 'POST',
      headers: demo,
      body: new FormData(),
    });
    expect(none.status).toBe(400);
  });
});

describe('operations no gateway release knows (for PLATFORM_OPERATIONS)', () => {
  it('lists products a page at a time, and renames one', async () => {
    const page = await get<{ total: number; data: ProductInfo[] }>(
      '/dashboard/product/lists?status=completed',
    );
    expect(page.data.map((p) => p.product_id)).toEqual([seededProduct]);
    const renamed = await emu.data<ProductInfo>(
      'POST',
      `/dashboard/product/rename/${seededProduct}`,
      {
        headers: demo,
        body: { product_name: 'Renamed' },
      },
    );
    expect(renamed.product_name).toBe('Renamed');
  });
});
