// The current client's dashboard (PLATFORM.md, "What the platform's current client does",
// version 0.3.2): products analysed into reports, the category taxonomy, research
// results. All x-api-key, like every route of the current client.
import { Hono } from 'hono';
import { requireKey } from './auth';
import { CATEGORIES, opaqueIdFrom, reportFor } from './dashboard-seed';
import {
  badRequest,
  type Ctx,
  type EmuEnv,
  enumParam,
  jsonBody,
  notFound,
  ok,
  optString,
  paged,
  pageParams,
} from './http';
import type { NewProduct, ProductInfo, Report } from './types';

const xApiKey = requireKey('x-api-key');

/** A new product's analysis completes on its second status read (the client polls). */
const READS_TO_COMPLETE = 2;

let created = 0;

function findReport(c: Ctx, id: string): Report {
  const report = c.get('account').dashboard.reports.find((r) => r.report_id === id);
  if (!report) throw notFound('report');
  return report;
}

/** Report fields a client may change, with how each is checked. */
const REPORT_FIELDS: Record<string, (v: unknown) => boolean> = {
  product_name: (v) => typeof v === 'string' && v.length > 0,
  target_description: (v) => typeof v === 'string',
  keywords: (v) => Array.isArray(v) && v.every((k) => typeof k === 'string'),
  user_personas: Array.isArray,
  user_profiles: Array.isArray,
  competitors: Array.isArray,
  recommended_campaigns: (v) =>
    Array.isArray(v) &&
    v.every((x) => typeof x?.name === 'string' && typeof x?.description === 'string'),
  related_links: (v) => Array.isArray(v) && v.every((k) => typeof k === 'string'),
  related_industries: (v) =>
    Array.isArray(v) && v.every((x) => Number.isInteger(x?.level1?.id) && Array.isArray(x?.level2)),
};

export const dashboardRoutes = new Hono<EmuEnv>()
  .post('/dashboard/product/create', xApiKey, (c) => {
    const body = jsonBody(c);
    const product = body.product;
    if (typeof product !== 'string' || product.trim() === '')
      throw badRequest('product is required');
    const attachments = body.attachments ?? [];
    if (
      !Array.isArray(attachments) ||
      !attachments.every((a) => typeof a?.file_name === 'string' && typeof a?.file_url === 'string')
    ) {
      throw badRequest('attachments must be a list of {file_name, file_url}');
    }
    const info: ProductInfo = {
      product_id: opaqueIdFrom('prod', `created:${Date.now()}:${++created}`),
      product_name: product.slice(0, 64),
      status: 'pending',
      analysis_result: { report_id: '' },
      description: product,
      has_guided: false,
    };
    c.get('account').dashboard.products.push({ info, reads: 0 });
    const { product_id, product_name, status } = info;
    return ok<NewProduct>(c, { product_id, product_name, status });
  })
  .get('/dashboard/product/candidates/:product_id/info', xApiKey, (c) => {
    const dashboard = c.get('account').dashboard;
    const entry = dashboard.products.find((p) => p.info.product_id === c.req.param('product_id'));
    if (!entry) throw notFound('product');
    entry.reads += 1;
    if (entry.info.status === 'pending' && entry.reads >= READS_TO_COMPLETE) {
      const reportId = opaqueIdFrom('rep', entry.info.product_id);
      dashboard.reports.push(reportFor(reportId, entry.info.product_name));
      entry.info.status = 'completed';
      entry.info.analysis_result = { report_id: reportId };
    }
    return ok<ProductInfo>(c, entry.info);
  })
  .get('/dashboard/report/info/:report_id', xApiKey, (c) =>
    ok<Report>(c, findReport(c, c.req.param('report_id'))),
  )
  .post('/dashboard/report/update/:report_id', xApiKey, (c) => {
    const report = findReport(c, c.req.param('report_id'));
    const changes = jsonBody(c);
    for (const [name, value] of Object.entries(changes)) {
      const valid = REPORT_FIELDS[name];
      if (!valid) throw badRequest(`${name} is not a report field that can change`);
      if (!valid(value)) throw badRequest(`${name} has the wrong type`);
    }
    Object.assign(report, changes);
    return ok<Report>(c, report);
  })
  .get('/dashboard/categories', xApiKey, (c) => ok(c, CATEGORIES))
  .get('/dashboard/product/query/results/:query_id/lists', xApiKey, (c) => {
    const queryId = c.req.param('query_id');
    const posts = c.get('account').dashboard.queries.get(queryId);
    if (!posts) throw notFound('query');
    return ok(c, { query_id: queryId, total: posts.length, posts });
  })
  // Beyond the current client: operations no gateway release knows, for trying
  // PLATFORM_OPERATIONS (docs/CONFIGURATION.md, "Declaring operations").
  .get('/dashboard/product/lists', xApiKey, (c) => {
    const status = enumParam(c, 'status', ['all', 'pending', 'completed'] as const, 'all');
    const infos = c
      .get('account')
      .dashboard.products.map((p) => p.info)
      .filter((p) => status === 'all' || p.status === status);
    return ok(c, paged(infos, pageParams(c, 10)));
  })
  .post('/dashboard/product/rename/:product_id', xApiKey, (c) => {
    const entry = c
      .get('account')
      .dashboard.products.find((p) => p.info.product_id === c.req.param('product_id'));
    if (!entry) throw notFound('product');
    const name = optString(jsonBody(c), 'product_name');
    if (!name) throw badRequest('product_name is required');
    entry.info.product_name = name;
    return ok<ProductInfo>(c, entry.info);
  });
