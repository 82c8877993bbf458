/**
 * Operator API: the fleet overview (GET /admin/overview), the console's first page:
 * the last hours across tenants, from the fleet boards the TenantGuards report to
 * (objects/fleet/fleet-board.ts): top tenants by requests, limiter refusals and 5xx, and
 * the tenants whose platform key the platform refused, most refusals first: each list
 * at most `limit` long (docs/OBSERVABILITY.md, "Fleet overview").
 */
import { type BoardTops, FLEET_SHARDS, fleetBoard } from '../objects/fleet/fleet-board';
import type { FleetTenant } from '../types/wire';
import { adminStores } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './overview.contract';
import { mergeSeries } from './series-merge';

const HOUR_MS = 3_600_000;

type Figure = 'requests' | 'refused' | 'errors_5xx' | 'key_rejected';

/** The top `limit` of several shards' tops, by one figure (ties by tenant id). */
function merged(lists: FleetTenant[][], by: Figure, limit: number): FleetTenant[] {
  return lists
    .flat()
    .sort((a, b) => b[by] - a[by] || a.tenant_id.localeCompare(b.tenant_id))
    .slice(0, limit);
}

/**
 * Tenants named in a series answer at most (a KV read each), those of the newest hours
 * first; others go by their id.
 */
const NAMED_AT_MOST = 200;

export function overviewRoutes(app: AdminApp): void {
  handle(app, contract.getFleetSeries, async (c) => {
    const started = Date.now();
    const { hours } = c.req.valid('query');
    const since = Math.floor(started / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS;
    const boards = await Promise.all(
      Array.from({ length: FLEET_SHARDS }, (_, i) => fleetBoard(c.env, i).series(since)),
    );
    const { points, tenantIds } = mergeSeries(boards, since, hours);
    const { tenants } = await adminStores(c);
    const named = await Promise.all(
      tenantIds.map(async (id, i) => ({
        tenant_id: id,
        name: i < NAMED_AT_MOST ? ((await tenants.getStored(id))?.name ?? null) : null,
      })),
    );
    return {
      from: new Date(since).toISOString(),
      hours,
      points,
      tenants: named,
      shards: FLEET_SHARDS,
      ms: Date.now() - started,
    };
  });

  handle(app, contract.getOverview, async (c) => {
    const started = Date.now();
    const { hours, limit } = c.req.valid('query');
    const since = Math.floor(started / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS;
    const shards: BoardTops[] = await Promise.all(
      Array.from({ length: FLEET_SHARDS }, (_, i) => fleetBoard(c.env, i).tops(since, limit)),
    );
    const top = (list: (s: BoardTops) => FleetTenant[], by: Figure) =>
      merged(shards.map(list), by, limit);
    const answer = {
      top_requests: top((s) => s.by_requests, 'requests'),
      top_refused: top((s) => s.by_refused, 'refused'),
      top_errors: top((s) => s.by_errors, 'errors_5xx'),
      key_rejected: top((s) => s.key_rejected, 'key_rejected'),
    };
    // Names from KV, for the few tenants shown (they may have been renamed or deleted).
    const ids = new Set(Object.values(answer).flatMap((l) => l.map((t) => t.tenant_id)));
    const { tenants } = await adminStores(c);
    const names = new Map(
      await Promise.all(
        [...ids].map(async (id) => [id, (await tenants.getStored(id))?.name ?? null] as const),
      ),
    );
    const named = (l: FleetTenant[]) =>
      l.map((t) => ({ ...t, name: names.get(t.tenant_id) ?? null }));
    return {
      since: new Date(since).toISOString(),
      hours,
      tenants: shards.reduce((n, s) => n + s.tenants, 0),
      totals: {
        requests: shards.reduce((n, s) => n + s.totals.requests, 0),
        refused: shards.reduce((n, s) => n + s.totals.refused, 0),
        errors_5xx: shards.reduce((n, s) => n + s.totals.errors_5xx, 0),
        key_rejected: shards.reduce((n, s) => n + s.totals.key_rejected, 0),
        self_service: shards.reduce((n, s) => n + s.totals.self_service, 0),
      },
      top_requests: named(answer.top_requests),
      top_refused: named(answer.top_refused),
      top_errors: named(answer.top_errors),
      key_rejected: named(answer.key_rejected),
      shards: FLEET_SHARDS,
      ms: Date.now() - started,
    };
  });
}
