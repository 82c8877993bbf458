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
 * in parallel over at most KEPT_HOURS (7 days and an hour) of rows per tenant: at most
 * 169 rows per tenant, about 105,000 rows a board at 10,000 tenants busy every hour.
 */
import { DurableObject } from 'cloudflare:workers';
import { fnv1a } from '../../hash';
import { LATENCY_COLUMNS } from '../../metering/usage';
import type { FleetTenant } from '../../types/wire';
import { openTables } from '../tables';
import { type BoardSeries, boardSeries, migrateSeriesColumns } from './fleet-series';

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
  /** Answered 4xx (the limiter's 429s included); absent from guards older than it. */
  errors_4xx?: number;
  /**
   * Requests per latency bucket (metering/usage.ts, LATENCY_BUCKETS_MS, then one for
   * above), so percentiles can be taken across tenants; absent from guards older than it.
   */
  latency?: number[];
  /** The platform refused the tenant's platform key (401 or 403). */
  key_rejected: number;
  /** The platform's status of the hour's last such refusal. */
  key_status: number | null;
}

/** Board objects the tenants are spread over. */
export const FLEET_SHARDS = 16;
/** Hours a board keeps: the overview's 7 days (its series), and the one running. */
export const KEPT_HOURS = 7 * 24 + 1;
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

/** A tenant's row of the board: its figures as the answer has them, less the name (the
 *  board keeps none), and the hour of its key's last refusal in epoch ms. */
type Row = Record<string, SqlStorageValue> &
  Omit<FleetTenant, 'name' | 'key_at'> & { key_at: number | null };

/** The tables, made where missing at every start. */
const TABLES = `
  CREATE TABLE IF NOT EXISTS tenant_hours (
    tenant_id TEXT NOT NULL, hour INTEGER NOT NULL, requests INTEGER NOT NULL,
    refused INTEGER NOT NULL, errors_5xx INTEGER NOT NULL, key_rejected INTEGER NOT NULL,
    key_status INTEGER, PRIMARY KEY (tenant_id, hour));
  CREATE INDEX IF NOT EXISTS tenant_hours_by_hour ON tenant_hours (hour);
`;

export class FleetBoard extends DurableObject<Cloudflare.Env> {
  private readonly sql = openTables(this.ctx, TABLES, migrateSeriesColumns);

  /** A guard's figures for the hours it names (they replace what the board had). */
  report(tenantId: string, hours: FleetHour[], now: number): void {
    const oldest = Math.floor(now / HOUR_MS) * HOUR_MS - (KEPT_HOURS - 1) * HOUR_MS;
    for (const h of hours) {
      if (h.hour < oldest) continue;
      const latency = LATENCY_COLUMNS.map((_, i) => h.latency?.[i] ?? 0);
      this.sql.exec(
        `INSERT OR REPLACE INTO tenant_hours
           (tenant_id, hour, requests, refused, errors_5xx, key_rejected, key_status, errors_4xx,
            self_service, ${LATENCY_COLUMNS.join(', ')})
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ${LATENCY_COLUMNS.map(() => '?').join(', ')})`,
        tenantId,
        h.hour,
        h.requests,
        h.refused,
        h.errors_5xx,
        h.key_rejected,
        h.key_status,
        h.errors_4xx ?? 0,
        h.self_service ?? 0,
        ...latency,
      );
    }
    this.sql.exec('DELETE FROM tenant_hours WHERE hour < ?', oldest);
  }

  /** Its tenants' series since `since` (an hour's start): sums and top tenants by hour. */
  series(since: number): BoardSeries {
    return boardSeries(this.sql, since);
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
