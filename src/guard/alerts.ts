/**
 * Quota alerts, kept by a tenant's TenantGuard: when a quota's use crosses a
 * threshold (default 80 % and 100 %), one signed POST goes to the tenant's
 * webhook, once per crossing per period, retried with backoff (at most
 * ALERT_MAX_TRIES tries) from the guard's alarm (docs/OBSERVABILITY.md, "Quota alerts").
 */

import { hmacSha256Hex } from '../hash';
import { isSealed, type KeyRing, open } from '../tenants/crypto';
import type { Sql } from './sql';

export const DEFAULT_THRESHOLDS = [80, 100];
export const ALERT_MAX_TRIES = 5;
/** First retry after this long, then doubling. */
export const ALERT_BACKOFF_MS = 10_000;
/** A delivery that takes longer than this counts as failed. */
const DELIVERY_TIMEOUT_MS = 10_000;
export const SIGNATURE_HEADER = 'X-Gateway-Signature';

export interface AlertConfig {
  tenantId: string;
  url: string;
  thresholds: number[];
  /**
   * Signs every delivery; shown to the operator once, stored sealed under
   * KEY_ENCRYPTION_KEY (tenants/crypto.ts), bound to the tenant id.
   */
  secret: string;
}

export interface AlertPayload {
  tenant_id: string;
  policy: string;
  threshold: number;
  used: number;
  limit: number;
  period_end: string;
  sent_at: string;
}

export interface DeliveryResult {
  id: number;
  payload: AlertPayload;
  outcome: 'delivered' | 'retrying' | 'failed';
  attempts: number;
  status: number | null;
}

export function migrateAlerts(sql: Sql): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS alert_config (
      id INTEGER PRIMARY KEY CHECK (id = 1), tenant_id TEXT NOT NULL, url TEXT NOT NULL,
      thresholds TEXT NOT NULL, secret TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS alerts_sent (
      meter TEXT NOT NULL, period_start INTEGER NOT NULL, threshold INTEGER NOT NULL,
      PRIMARY KEY (meter, period_start, threshold));
    CREATE TABLE IF NOT EXISTS alert_outbox (
      id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL, attempts INTEGER NOT NULL,
      next_at INTEGER NOT NULL);
  `);
}

/** Longer than any quota period (a month): crossings of periods over by then are forgotten. */
const SENT_KEPT_MS = 62 * 86_400_000;

/** Drops the record of crossings in periods long over (the alarm calls it). */
export function sweepAlertsSent(sql: Sql, now: number): void {
  sql.exec('DELETE FROM alerts_sent WHERE period_start < ?', now - SENT_KEPT_MS);
}

export function readAlertConfig(sql: Sql): AlertConfig | null {
  const row = sql
    .exec<{ tenant_id: string; url: string; thresholds: string; secret: string }>(
      'SELECT tenant_id, url, thresholds, secret FROM alert_config WHERE id = 1',
    )
    .toArray()[0];
  if (!row) return null;
  const thresholds: unknown = JSON.parse(row.thresholds);
  return {
    tenantId: row.tenant_id,
    url: row.url,
    thresholds: Array.isArray(thresholds) ? thresholds.map(Number) : DEFAULT_THRESHOLDS,
    secret: row.secret,
  };
}

export function writeAlertConfig(sql: Sql, config: AlertConfig | null): void {
  if (!config) {
    sql.exec('DELETE FROM alert_config');
    return;
  }
  sql.exec(
    'INSERT OR REPLACE INTO alert_config (id, tenant_id, url, thresholds, secret) ' +
      'VALUES (1, ?, ?, ?, ?)',
    config.tenantId,
    config.url,
    JSON.stringify(config.thresholds),
    config.secret,
  );
}

/**
 * Queues an alert for every threshold a quota's use has reached in this period
 * and not yet been alerted for; returns when the first queued one is due.
 */
export function noteQuotaUse(
  sql: Sql,
  config: AlertConfig,
  q: {
    meter: string;
    policy: string;
    used: number;
    limit: number;
    periodStart: number;
    periodEnd: number;
  },
  now: number,
): number | null {
  let due: number | null = null;
  for (const threshold of config.thresholds) {
    if (q.used * 100 < threshold * q.limit) continue;
    const fresh = sql.exec(
      'INSERT OR IGNORE INTO alerts_sent (meter, period_start, threshold) VALUES (?, ?, ?)',
      q.meter,
      q.periodStart,
      threshold,
    ).rowsWritten;
    if (fresh === 0) continue;
    const payload: AlertPayload = {
      tenant_id: config.tenantId,
      policy: q.policy,
      threshold,
      used: q.used,
      limit: q.limit,
      period_end: new Date(q.periodEnd).toISOString(),
      sent_at: new Date(now).toISOString(),
    };
    sql.exec(
      'INSERT INTO alert_outbox (body, attempts, next_at) VALUES (?, 0, ?)',
      JSON.stringify(payload),
      now,
    );
    due = now;
  }
  return due;
}

/** Delivers every queued alert due at `now`; the results, and when the next one is due. */
export async function deliverDue(
  sql: Sql,
  config: AlertConfig | null,
  ring: KeyRing,
  now: number,
): Promise<{ results: DeliveryResult[]; nextAt: number | null }> {
  const due = sql
    .exec<{ id: number; body: string; attempts: number }>(
      'SELECT id, body, attempts FROM alert_outbox WHERE next_at <= ? ORDER BY id',
      now,
    )
    .toArray();
  // Claimed before the first await: a delivery run that overlaps this one (the alarm, say)
  // does not see them as due, so no alert is sent twice for one try.
  for (const row of due) {
    sql.exec(
      'UPDATE alert_outbox SET attempts = ?, next_at = ? WHERE id = ?',
      row.attempts + 1,
      now + 2 * DELIVERY_TIMEOUT_MS,
      row.id,
    );
  }
  const results: DeliveryResult[] = [];
  const secret = config && (await signingSecret(ring, config));
  for (const row of due) {
    // Without a webhook (removed since) the alert has nowhere to go.
    const status = config && secret ? await post(config.url, secret, row.id, row.body) : null;
    const payload: AlertPayload = JSON.parse(row.body);
    const attempts = row.attempts + 1;
    if (status !== null && status >= 200 && status < 300) {
      sql.exec('DELETE FROM alert_outbox WHERE id = ?', row.id);
      results.push({ id: row.id, payload, outcome: 'delivered', attempts, status });
    } else if (attempts >= ALERT_MAX_TRIES || !config) {
      sql.exec('DELETE FROM alert_outbox WHERE id = ?', row.id);
      results.push({ id: row.id, payload, outcome: 'failed', attempts, status });
    } else {
      const next = now + ALERT_BACKOFF_MS * 2 ** (attempts - 1);
      sql.exec('UPDATE alert_outbox SET next_at = ? WHERE id = ?', next, row.id);
      results.push({ id: row.id, payload, outcome: 'retrying', attempts, status });
    }
  }
  const next = sql
    .exec<{ at: number | null }>('SELECT MIN(next_at) AS at FROM alert_outbox')
    .one().at;
  return { results, nextAt: next ?? null };
}

/**
 * One test delivery, sent now and not retried (the console's "send a test
 * alert"): the alert's shape with `test: true` and policy `test`, signed like
 * any other, with delivery id `test`. The receiver's HTTP status, or null when
 * it could not be reached in time (or the secret cannot be opened).
 */
export async function sendTestAlert(
  config: AlertConfig,
  ring: KeyRing,
  now: number,
): Promise<number | null> {
  const secret = await signingSecret(ring, config);
  if (!secret) return null;
  const payload: AlertPayload & { test: true } = {
    tenant_id: config.tenantId,
    policy: 'test',
    threshold: 0,
    used: 0,
    limit: 0,
    period_end: new Date(now).toISOString(),
    sent_at: new Date(now).toISOString(),
    test: true,
  };
  return post(config.url, secret, 'test', JSON.stringify(payload));
}

/**
 * The webhook's signing secret, opened; null when it cannot be (its key was
 * dropped from the ring: the operator sets the webhook again for a new secret).
 * Secrets stored before sealing are used as they are until then.
 */
async function signingSecret(ring: KeyRing, config: AlertConfig): Promise<string | null> {
  if (!isSealed(config.secret)) return config.secret;
  try {
    return await open(ring, config.secret, config.tenantId);
  } catch {
    return null;
  }
}

/**
 * One signed POST; the HTTP status, or null when the receiver could not be
 * reached in time. A redirect is not followed: it counts as a failed try.
 */
async function post(
  url: string,
  secret: string,
  id: number | string,
  body: string,
): Promise<number | null> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [SIGNATURE_HEADER]: `sha256=${await hmacSha256Hex(secret, body)}`,
        'X-Gateway-Delivery': String(id),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return res.status;
  } catch {
    return null;
  }
}
