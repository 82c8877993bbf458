/**
 * The fleet board: what the console's overview reads (docs/OBSERVABILITY.md,
 * "Fleet overview"). Each TenantGuard reports its tenant's hourly figures
 * (requests, limiter refusals, 5xx, its platform key refused) to one of FLEET_SHARDS
 * board objects, chosen by the tenant id, at most once a minute while it has traffic
 * (objects/tenant/history/fleet-report.ts); a report replaces the hours it names, so a
 * repeated one changes nothing. The overview asks every shard for its top tenants
 * by each figure and merges them: the top of the union is in the union of the tops.
 *
 * At 10,000 busy tenants: at most 10,000 reports a minute, about 10 a second per
 * shard (a Durable Object serves about 1,000), and an overview is FLEET_SHARDS calls
 * in parallel over at most 25 hours of rows per tenant.
 */
import { DurableObject } from 'cloudflare:workers';
import { fnv1a } from '../../hash';
import type { FleetTenant } from '../../types/wire';

/** One hour of a tenant's figures, as it reports them to its fleet board. */
export interface FleetHour {
  /** The hour's start, ms. */
  hour: number;
  /** Data requests: every request of a known token but the self-service surface's. */
  requests: number;
  /** Self-service requests (the portal's, a token's own view and rotation, MCP discovery). */
  self_service?: number;
  /** Refused by a rate policy or quota (429). */
  refused: number;
  /** Answered 5xx (the key's refusals included: the gateway answers them 502). */
  errors_5xx: number;
  /** The platform refused the tenant's platform key (401 or 403). */
  key_rejected: number;
  /** The platform's status of the hour's last such refusal. */
  key_status: number | null;
}

/** Board objects the tenants are spread over. */
export const FLEET_SHARDS = 16;
/** Hours a board keeps: the overview's 24, and the one running. */
const KEPT_HOURS = 25;
const HOUR_MS = 3_600_000;

/** The board a tenant reports to. */
export function fleetBoardOf(
  env: { FLEET_BOARD: DurableObjectNamespace<FleetBoard> },
  tenantId: string,
) {
  return fleetBoard(env, fnv1a(tenantId) % FLEET_SHARDS);
}

export function fleetBoard(
  env: { FLEET_BOARD: DurableObjectNamespace<FleetBoard> },
  shard: number,
) {
  return env.FLEET_BOARD.get(env.FLEET_BOARD.idFromName(`fleet:${shard}`));
}

/** One shard's answer: its tenants' totals since the hour asked, top `limit` by each figure. */
export interface BoardTops {
  tenants: number;
  totals: Omit<FleetTenant, 'tenant_id' | 'name' | 'key_status' | 'key_at'>;
  by_requests: FleetTenant[];
  by_refused: FleetTenant[];
  by_errors: FleetTenant[];
  key_rejected: FleetTenant[];
}

const FIGURES = `SUM(requests) AS requests, SUM(refused) AS refused, SUM(errors_5xx) AS errors_5xx,
  SUM(key_rejected) AS key_rejected, SUM(self_service) AS self_service`;

/** The sums over every tenant: null where no row was summed. */
type Totals = Record<string, SqlStorageValue> & {
  tenants: number;
  requests: number | null;
  refused: number | null;
  errors_5xx: number | null;
  key_rejected: number | null;
  self_service: number | null;
};

type Row = Record<string, SqlStorageValue> & {
  tenant_id: string;
  requests: number;
  refused: number;
  errors_5xx: number;
  key_rejected: number;
  self_service: number;
  key_status: number | null;
  key_at: number | null;
};

export class FleetBoard extends DurableObject<Cloudflare.Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS tenant_hours (
        tenant_id TEXT NOT NULL, hour INTEGER NOT NULL, requests INTEGER NOT NULL,
        refused INTEGER NOT NULL, errors_5xx INTEGER NOT NULL, key_rejected INTEGER NOT NULL,
        key_status INTEGER, PRIMARY KEY (tenant_id, hour));
      CREATE INDEX IF NOT EXISTS tenant_hours_by_hour ON tenant_hours (hour);
    `);
    // Boards from before self-service requests were counted apart (their hours say 0).
    const columns = this.sql.exec<{ name: string }>('PRAGMA table_info(tenant_hours)').toArray();
    if (!columns.some((c) => c.name === 'self_service')) {
      this.sql.exec('ALTER TABLE tenant_hours ADD COLUMN self_service INTEGER NOT NULL DEFAULT 0');
    }
  }

  /** A guard's figures for the hours it names (they replace what the board had). */
  report(tenantId: string, hours: FleetHour[], now: number): void {
    const oldest = Math.floor(now / HOUR_MS) * HOUR_MS - (KEPT_HOURS - 1) * HOUR_MS;
    for (const h of hours) {
      if (h.hour < oldest) continue;
      this.sql.exec(
        `INSERT OR REPLACE INTO tenant_hours
           (tenant_id, hour, requests, refused, errors_5xx, key_rejected, key_status, self_service)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        tenantId,
        h.hour,
        h.requests,
        h.refused,
        h.errors_5xx,
        h.key_rejected,
        h.key_status,
        h.self_service ?? 0,
      );
    }
    this.sql.exec('DELETE FROM tenant_hours WHERE hour < ?', oldest);
  }

  /** Its tenants' totals since `since` (an hour's start): the top `limit` by each figure. */
  tops(since: number, limit: number): BoardTops {
    const top = (order: string, where = '') =>
      this.sql
        .exec<Row>(
          `SELECT tenant_id, ${FIGURES},
             (SELECT key_status FROM tenant_hours k WHERE k.tenant_id = t.tenant_id
                AND k.key_rejected > 0 AND k.hour >= ? ORDER BY k.hour DESC LIMIT 1) AS key_status,
             (SELECT MAX(hour) FROM tenant_hours k WHERE k.tenant_id = t.tenant_id
                AND k.key_rejected > 0 AND k.hour >= ?) AS key_at
           FROM tenant_hours t WHERE hour >= ? GROUP BY tenant_id ${where}
           ORDER BY ${order} DESC, tenant_id LIMIT ?`,
          since,
          since,
          since,
          limit,
        )
        .toArray()
        .map(
          (r): FleetTenant => ({
            tenant_id: r.tenant_id,
            name: null,
            requests: r.requests,
            refused: r.refused,
            errors_5xx: r.errors_5xx,
            key_rejected: r.key_rejected,
            self_service: r.self_service,
            key_status: r.key_status,
            key_at: r.key_at === null ? null : new Date(r.key_at).toISOString(),
          }),
        );
    const totals = this.sql
      .exec<Totals>(
        `SELECT COUNT(DISTINCT tenant_id) AS tenants, ${FIGURES} FROM tenant_hours WHERE hour >= ?`,
        since,
      )
      .one();
    return {
      tenants: Number(totals.tenants ?? 0),
      totals: {
        requests: Number(totals.requests ?? 0),
        refused: Number(totals.refused ?? 0),
        errors_5xx: Number(totals.errors_5xx ?? 0),
        key_rejected: Number(totals.key_rejected ?? 0),
        self_service: Number(totals.self_service ?? 0),
      },
      by_requests: top('requests', 'HAVING SUM(requests) > 0'),
      by_refused: top('refused', 'HAVING SUM(refused) > 0'),
      by_errors: top('errors_5xx', 'HAVING SUM(errors_5xx) > 0'),
      key_rejected: top('key_rejected', 'HAVING SUM(key_rejected) > 0'),
    };
  }
}
