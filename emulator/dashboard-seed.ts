// Seeded dashboard data of each account (the current client's products, reports and
// research results) and the category taxonomy every account shares. Deterministic, as
// seed.ts: ids are opaque strings derived from labels, never the clock.
import { createHash } from 'node:crypto';
import type { Category, CategoryTree, Dashboard, Post, Report } from './types';

/** An opaque id (`prod_3f9a…`): the platform's ids beyond the specification's are not UUIDs. */
export const opaqueIdFrom = (prefix: string, label: string): string =>
  `${prefix}_${createHash('sha256').update(label).digest('hex').slice(0, 20)}`;

const cat = (id: number, en: string, zh: string, level: number): Category => ({
  id,
  zh,
  en,
  en_desc: `${en} and related businesses`,
  level,
});

/** The category taxonomy (GET /dashboard/categories); reports name its ids. */
export const CATEGORIES: CategoryTree[] = [
  {
    category: cat(1, 'Software', '软件', 1),
    subcategories: [cat(101, 'Developer tools', '开发者工具', 2), cat(102, 'Security', '安全', 2)],
  },
  {
    category: cat(2, 'Retail', '零售', 1),
    subcategories: [cat(201, 'Fashion', '时尚', 2), cat(202, 'Home goods', '家居用品', 2)],
  },
  { category: cat(3, 'Travel', '旅行', 1), subcategories: [cat(301, 'Flights', '航班', 2)] },
];

/** A report as the platform writes one for a product. */
export function reportFor(reportId: string, productName: string): Report {
  return {
    report_id: reportId,
    product_name: productName,
    target_description: `People who would buy ${productName}`,
    keywords: [productName.toLowerCase(), 'launch', 'review'],
    user_personas: [{ name: 'Early adopter', age: '25-34' }],
    user_profiles: [{ platform: 'x', followers: 1200 }],
    competitors: [{ name: 'Incumbent Co', url: 'https://incumbent.example' }],
    recommended_campaigns: [
      { name: 'Launch thread', description: 'A thread that shows the product at work' },
    ],
    related_links: ['https://example.com/product'],
    related_industries: [{ level1: { id: 1 }, level2: [101, 102] }],
  };
}

function posts(acct: string): Post[] {
  return [1, 2, 3].map((n) => ({
    post_id: opaqueIdFrom('post', `${acct}:post:${n}`),
    author: `@${acct}_fan_${n}`,
    content: `Post ${n} about the ${acct} product`,
    url: `https://x.example/${acct}/status/${n}`,
    created_at: `2026-11-${String(10 + n).padStart(2, '0')}T09:00:00.000Z`,
    counts: { reply: n, like: 10 * n, retweet: 2 * n, view: 100 * n },
    media:
      n === 2 ? [{ type: 'image' as const, url: `https://x.example/media/${acct}/${n}.png` }] : [],
  }));
}

/** What an account's dashboard holds at start: one analysed product, its report, one query's results. */
export function seedDashboard(acct: string): Dashboard {
  const productId = opaqueIdFrom('prod', `${acct}:product:1`);
  const reportId = opaqueIdFrom('rep', `${acct}:report:1`);
  const name = `${acct[0]?.toUpperCase()}${acct.slice(1)} Widget`;
  return {
    products: [
      {
        info: {
          product_id: productId,
          product_name: name,
          status: 'completed',
          analysis_result: { report_id: reportId },
          description: `${name}: a widget for ${acct}`,
          has_guided: true,
        },
        reads: 0,
      },
    ],
    reports: [reportFor(reportId, name)],
    queries: new Map([[opaqueIdFrom('qry', `${acct}:query:1`), posts(acct)]]),
    uploads: [],
  };
}
