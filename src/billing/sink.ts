/**
 * Delivers a batch of usage CloudEvents to the configured sink (docs/BILLING.md, "Sinks"):
 * one POST of `application/cloudevents-batch+json`, signed with HMAC-SHA256 over
 * `<timestamp>.<body>` under USAGE_SINK_SECRET (`X-Gateway-Signature: t=…,kid=…,v1=…`),
 * with OpenMeter's bearer token when one is set. Redirects are not followed; only a 2xx
 * is delivered.
 */
import { hmacSha256Hex } from '../hash';
import type { UsageCloudEvent } from '../types/billing';
import type { Settings } from '../types/settings';

export const BATCH_TYPE = 'application/cloudevents-batch+json';
export const SIGNATURE_HEADER = 'X-Gateway-Signature';
/** A sink has this long to answer a batch. */
const SINK_TIMEOUT_MS = 15_000;
/** The longest wait between two tries of a batch. */
const MAX_RETRY_DELAY_S = 300;

/** Seconds before the next try of a batch tried `attempts` times: base, doubling, at most 300. */
export function retryDelay(attempts: number, baseS: number): number {
  return Math.min(MAX_RETRY_DELAY_S, baseS * 2 ** Math.max(0, attempts - 1));
}

export type Delivery = { ok: true } | { ok: false; why: string };

type SinkSettings = Pick<
  Settings,
  'USAGE_SINK_URL' | 'USAGE_SINK_KEY_ID' | 'USAGE_SINK_SECRET' | 'USAGE_SINK_TOKEN'
>;

export async function deliver(events: UsageCloudEvent[], s: SinkSettings): Promise<Delivery> {
  if (!s.USAGE_SINK_URL) return { ok: false, why: 'no USAGE_SINK_URL' };
  const body = JSON.stringify(events);
  const headers: Record<string, string> = { 'content-type': BATCH_TYPE };
  if (s.USAGE_SINK_SECRET) {
    const t = Math.floor(Date.now() / 1000);
    const mac = await hmacSha256Hex(s.USAGE_SINK_SECRET, `${t}.${body}`);
    headers[SIGNATURE_HEADER] = `t=${t},kid=${s.USAGE_SINK_KEY_ID},v1=${mac}`;
  }
  if (s.USAGE_SINK_TOKEN) headers.authorization = `Bearer ${s.USAGE_SINK_TOKEN}`;
  try {
    const res = await fetch(s.USAGE_SINK_URL, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(SINK_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return res.ok ? { ok: true } : { ok: false, why: `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, why: err instanceof Error ? err.name : 'fetch failed' };
  }
}
