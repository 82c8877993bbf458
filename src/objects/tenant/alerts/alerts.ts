/**
 * The alerts part's tables and deliveries (alerts-part.ts; docs/OBSERVABILITY.md, "Alerts"): a
 * quota's use crossing a threshold (default 80 % and 100 %, once per crossing per
 * period), the platform refusing the tenant's key (401 or 403, once per hour and
 * status) and a share of server errors above a threshold (once per hour;
 * health-alerts.ts finds the last two). Each goes to the tenant's webhook as one signed
 * POST, retried with backoff (at most ALERT_MAX_TRIES tries) from the guard's
 * alarm, and into the alert log the console shows (the last ALERT_LOG_KEPT),
 * webhook or not.
 */

import { hmacSha256Hex } from '../../../hash';
import { isSealed, type KeyRing, open } from '../../../tenants/crypto';
import type {
  AlertPayload,
  KeyRejectedAlert,
  QuotaAlert,
  RecentAlert,
  ServerErrorsAlert,
} from '../../../types/wire';
import type { Sql } from '../sql';
import { DEFAULT_SERVER_ERROR_PERCENT, DEFAULT_THRESHOLDS } from './alert-defaults';

export { DEFAULT_SERVER_ERROR_PERCENT, DEFAULT_THRESHOLDS };
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
  /** The share of an hour's requests that are server errors that raises an alert (percent). */
  serverErrorPercent: number;
  /**
   * Signs every delivery; shown to the operator once, stored sealed under
   * KEY_ENCRYPTION_KEY (tenants/crypto.ts), bound to the tenant id.
   */
  secret: string;
}

export type { AlertPayload, KeyRejectedAlert, QuotaAlert, ServerErrorsAlert };

/** A quota's use in its current period, as the limits part counts it. */
export interface QuotaUse {
  /** The meter's key (`quota:daily`, `token:<id>:quota:monthly`, …). */
  meter: string;
  policy: string;
  used: number;
  limit: number;
  periodStart: number;
  periodEnd: number;
}

export interface DeliveryResult {
  id: number;
  payload: AlertPayload;
  outcome: 'delivered' | 'retrying' | 'failed';
  attempts: number;
  status: number | null;
}

/** Alerts the log keeps for the console, newest first (docs/BOUNDS.md). */
export const ALERT_LOG_KEPT = 100;

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
    CREATE TABLE IF NOT EXISTS alert_log (
      id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, body TEXT NOT NULL,
      outbox_id INTEGER, delivery TEXT NOT NULL);
  `);
  // Webhooks set before server-error alerts get the column, empty (the default applies).
  const columns = sql.exec<{ name: string }>('PRAGMA table_info(alert_config)').toArray();
  if (!columns.some((c) => c.name === 'server_error_percent')) {
    sql.exec('ALTER TABLE alert_config ADD COLUMN server_error_percent INTEGER');
  }
}

/** Longer than any quota period (a month): crossings of periods over by then are forgotten. */
const SENT_KEPT_MS = 62 * 86_400_000;

/** Drops the record of crossings in periods long over (the alarm calls it). */
export function sweepAlertsSent(sql: Sql, now: number): void {
  sql.exec('DELETE FROM alerts_sent WHERE period_start < ?', now - SENT_KEPT_MS);
}

export function readAlertConfig(sql: Sql): AlertConfig | null {
  const row = sql
    .exec<{
      tenant_id: string;
      url: string;
      thresholds: string;
      secret: string;
      server_error_percent: number | null;
    }>(
      'SELECT tenant_id, url, thresholds, secret, server_error_percent FROM alert_config WHERE id = 1',
    )
    .toArray()[0];
  if (!row) return null;
  const thresholds: unknown = JSON.parse(row.thresholds);
  return {
    tenantId: row.tenant_id,
    url: row.url,
    thresholds: Array.isArray(thresholds) ? thresholds.map(Number) : DEFAULT_THRESHOLDS,
    serverErrorPercent: row.server_error_percent ?? DEFAULT_SERVER_ERROR_PERCENT,
    secret: row.secret,
  };
}

export function writeAlertConfig(sql: Sql, config: AlertConfig | null): void {
  if (!config) {
    sql.exec('DELETE FROM alert_config');
    return;
  }
  sql.exec(
    'INSERT OR REPLACE INTO alert_config ' +
      '(id, tenant_id, url, thresholds, secret, server_error_percent) VALUES (1, ?, ?, ?, ?, ?)',
    config.tenantId,
    config.url,
    JSON.stringify(config.thresholds),
    config.secret,
    config.serverErrorPercent,
  );
}

/**
 * Raises an alert for every threshold a quota's use has reached in this period and not
 * yet been alerted for (the webhook's thresholds, or the defaults without one); returns
 * when the first raised one is due.
 */
export function noteQuotaUse(
  sql: Sql,
  tenantId: string,
  config: AlertConfig | null,
  q: QuotaUse,
  now: number,
): number | null {
  let due: number | null = null;
  for (const threshold of config?.thresholds ?? DEFAULT_THRESHOLDS) {
    if (q.used * 100 < threshold * q.limit) continue;
    if (!firstTime(sql, q.meter, q.periodStart, threshold)) continue;
    raiseAlert(
      sql,
      config,
      {
        kind: 'quota',
        tenant_id: tenantId,
        policy: q.policy,
        threshold,
        used: q.used,
        limit: q.limit,
        period_end: new Date(q.periodEnd).toISOString(),
        sent_at: new Date(now).toISOString(),
      },
      now,
    );
    due = now;
  }
  return due;
}

/** What an alert is about, in a few fields (the audit log's detail of a delivery). */
export function alertSummary(a: AlertPayload): Record<string, unknown> {
  switch (a.kind) {
    case 'quota':
      return { kind: a.kind, policy: a.policy, threshold: a.threshold };
    case 'platform_key_rejected':
      return { kind: a.kind, upstream_status: a.upstream_status, count: a.count };
    case 'server_errors':
      return { kind: a.kind, threshold: a.threshold, share_percent: a.share_percent };
  }
}

/** Whether this crossing (what, period, threshold) is new: each is alerted once. */
export function firstTime(sql: Sql, what: string, periodStart: number, threshold: number): boolean {
  return (
    sql.exec(
      'INSERT OR IGNORE INTO alerts_sent (meter, period_start, threshold) VALUES (?, ?, ?)',
      what,
      periodStart,
      threshold,
    ).rowsWritten > 0
  );
}

/**
 * An alert into the log the console shows and, with a webhook, the outbox the
 * alarm delivers from (due now).
 */
export function raiseAlert(
  sql: Sql,
  config: AlertConfig | null,
  payload: AlertPayload,
  now: number,
): void {
  const body = JSON.stringify(payload);
  const outbox = config
    ? sql
        .exec<{ id: number }>(
          'INSERT INTO alert_outbox (body, attempts, next_at) VALUES (?, 0, ?) RETURNING id',
          body,
          now,
        )
        .one().id
    : null;
  sql.exec(
    'INSERT INTO alert_log (at, body, outbox_id, delivery) VALUES (?, ?, ?, ?)',
    now,
    body,
    outbox,
    config ? 'pending' : 'no_webhook',
  );
  sql.exec('DELETE FROM alert_log WHERE id <= (SELECT MAX(id) FROM alert_log) - ?', ALERT_LOG_KEPT);
}

/** The alert log, newest first: what was raised, and what became of its delivery. */
export function readAlertLog(sql: Sql): RecentAlert[] {
  return sql
    .exec<{ id: number; at: number; body: string; delivery: string }>(
      'SELECT id, at, body, delivery FROM alert_log ORDER BY id DESC',
    )
    .toArray()
    .map((r) => ({
      id: r.id,
      at: new Date(r.at).toISOString(),
      delivery: r.delivery as RecentAlert['delivery'],
      alert: JSON.parse(r.body) as AlertPayload,
    }));
}

function noteDelivery(sql: Sql, outboxId: number, delivery: RecentAlert['delivery']): void {
  sql.exec('UPDATE alert_log SET delivery = ? WHERE outbox_id = ?', delivery, outboxId);
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
    // Alerts queued before kinds existed were all quota alerts.
    const payload = { kind: 'quota', ...JSON.parse(row.body) } as AlertPayload;
    const attempts = row.attempts + 1;
    if (status !== null && status >= 200 && status < 300) {
      sql.exec('DELETE FROM alert_outbox WHERE id = ?', row.id);
      noteDelivery(sql, row.id, 'delivered');
      results.push({ id: row.id, payload, outcome: 'delivered', attempts, status });
    } else if (attempts >= ALERT_MAX_TRIES || !config) {
      sql.exec('DELETE FROM alert_outbox WHERE id = ?', row.id);
      noteDelivery(sql, row.id, 'failed');
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
 * any other, with delivery id `test`. The receiver's HTTP status, or why there
 * is none: no answer within DELIVERY_TIMEOUT_MS, no connection at all (refused,
 * reset, no such host), or a secret that cannot be opened.
 */
export async function sendTestAlert(
  config: AlertConfig,
  ring: KeyRing,
  now: number,
): Promise<Delivery> {
  const secret = await signingSecret(ring, config);
  if (!secret) return { status: null, failure: 'secret_unavailable', ms: 0 };
  const payload: Omit<QuotaAlert, 'kind'> & { kind: 'test'; test: true } = {
    kind: 'test',
    tenant_id: config.tenantId,
    policy: 'test',
    threshold: 0,
    used: 0,
    limit: 0,
    period_end: new Date(now).toISOString(),
    sent_at: new Date(now).toISOString(),
    test: true,
  };
  return deliver(config.url, secret, 'test', JSON.stringify(payload));
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

/** What one delivery came to: the receiver's status, or why there is none. */
export interface Delivery {
  status: number | null;
  failure: 'timeout' | 'unreachable' | 'secret_unavailable' | null;
  /** How long it took. */
  ms: number;
}

/** One signed POST's HTTP status, or null when there was none (a failed try). */
async function post(url: string, secret: string, id: number | string, body: string) {
  return (await deliver(url, secret, id, body)).status;
}

/** One signed POST. A redirect is not followed: it counts as a failed try. */
async function deliver(
  url: string,
  secret: string,
  id: number | string,
  body: string,
): Promise<Delivery> {
  const started = Date.now();
  const signal = AbortSignal.timeout(DELIVERY_TIMEOUT_MS);
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
      signal,
    });
    await res.body?.cancel();
    return { status: res.status, failure: null, ms: Date.now() - started };
  } catch {
    // The deadline ran out, or the connection failed before it (refused, reset, no host).
    const failure = signal.aborted ? 'timeout' : 'unreachable';
    return { status: null, failure, ms: Date.now() - started };
  }
}
