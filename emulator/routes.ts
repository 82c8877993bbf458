// Platform routes 4.1–4.7: API keys, call history and teams.
import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { requireKey } from './auth';
import {
  badRequest,
  type EmuEnv,
  enumParam,
  jsonBody,
  notFound,
  ok,
  optString,
  paged,
  pageParams,
} from './http';
import { PLATFORMS, STATES, SYSTEM_USER_ID } from './seed';
import type { CallRecord, FilterValues, NewApiKey } from './types';

const authz = requireKey('authorization');
const xApiKey = requireKey('x-api-key');

/** A real calendar date in YYYY-MM-DD form, or undefined when absent. */
function dateParam(value: string | undefined, name: string): string | undefined {
  if (!value) return undefined;
  const t = Date.parse(`${value}T00:00:00Z`); // NaN for month 13; rolls over for Feb 30, caught below
  const valid =
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    !Number.isNaN(t) &&
    new Date(t).toISOString().startsWith(value);
  if (!valid) throw badRequest(`${name} must be a date YYYY-MM-DD`);
  return value;
}

export const accountRoutes = new Hono<EmuEnv>()
  // 4.1: the new key works at once.
  .post('/user/apikey/new', authz, (c) => {
    const name = optString(jsonBody(c), 'name');
    if (!name) throw badRequest('name is required');
    const state = c.get('state');
    const now = new Date().toISOString();
    const api_key = `sk-emu-${randomBytes(20).toString('hex')}`;
    c.get('account').keys.push({
      id: state.nextKeyId++,
      name,
      api_key,
      created_at: now,
      last_used_at: now,
    });
    return ok<NewApiKey>(c, { api_key });
  })
  // 4.2: only the caller's own keys can be deleted; another account's id is "not found".
  .delete('/user/apikey/delete/:id', authz, (c) => {
    if (!/^\d+$/.test(c.req.param('id'))) throw badRequest('id must be an integer');
    const account = c.get('account');
    const id = Number(c.req.param('id'));
    if (!account.keys.some((k) => k.id === id)) throw notFound('api key');
    account.keys = account.keys.filter((k) => k.id !== id);
    return ok(c, {});
  })
  .get('/user/apikey/lists', authz, (c) => ok(c, paged(c.get('account').keys, pageParams(c, 10))))
  // 4.4: key names are those that occur in the account's call history.
  .get('/user/call/filter_values', authz, (c) => {
    const names = [...new Set(c.get('account').calls.map((r) => r.api_key_name))].sort();
    return ok<FilterValues>(c, {
      api_key_names: names,
      platforms: [...PLATFORMS],
      states: [...STATES],
    });
  })
  // 4.5: "system" teams belong to the platform's system user, "user" teams to the account.
  .get('/team/lists', authz, (c) => {
    const type = enumParam(c, 'team_type', ['all', 'system', 'user'] as const, 'all');
    const teams = c
      .get('account')
      .teams.filter(
        (t) => type === 'all' || (t.user_id === SYSTEM_USER_ID) === (type === 'system'),
      );
    return ok(c, paged(teams, pageParams(c, 10)));
  })
  .get('/team/info/:team_id', authz, (c) => {
    const team = c.get('account').teams.find((t) => t.team_id === c.req.param('team_id'));
    if (!team) throw notFound('team');
    return ok(c, team);
  })
  // 4.7: filters, then sort (ties broken by created_at, then session_id, so pages are stable), then page.
  .get('/user/call/lists', xApiKey, (c) => {
    const platform = enumParam(c, 'platform', ['all', ...PLATFORMS] as const, 'all');
    const status = enumParam(c, 'status', ['', ...STATES] as const, '');
    const field = enumParam(c, 'order_field', ['created_at', 'total_cost'] as const, 'created_at');
    const order = enumParam(c, 'order', ['desc', 'asc'] as const, 'desc');
    const start = dateParam(c.req.query('start_date'), 'start_date');
    const end = dateParam(c.req.query('end_date'), 'end_date');
    if (start && end && start > end) throw badRequest('start_date must not be after end_date');
    const keyName = c.req.query('api_key_name') || undefined;
    const page = pageParams(c, 10);

    const rows = c.get('account').calls.filter((r) => {
      const d = r.created_at.slice(0, 10);
      return (
        (platform === 'all' || r.platform === platform) &&
        (!status || r.status === status) &&
        (!keyName || r.api_key_name === keyName) &&
        (!start || d >= start) &&
        (!end || d <= end)
      );
    });
    const value = (r: CallRecord) =>
      field === 'total_cost' ? r.cost.total_credit : Date.parse(r.created_at);
    const sign = order === 'asc' ? 1 : -1;
    rows.sort(
      (a, b) =>
        sign *
        (value(a) - value(b) ||
          a.created_at.localeCompare(b.created_at) ||
          a.session_id.localeCompare(b.session_id)),
    );
    return ok(c, paged(rows, page));
  });
