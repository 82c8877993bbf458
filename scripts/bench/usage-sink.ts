/**
 * Whether a gateway with the usage export on did the work it was measured for: every
 * event its isolate produced (GET /admin/stats: usage_events, usage_events_lost) reached
 * the emulator's sink, once (GET /__emulator/usage/bench). The sink gets the last batch
 * up to the consumer's 10 s batch timeout (plus the producer's 1 s) after the last round.
 */
import { adminClient } from '../../ui/lib/admin-client';

export interface ExportCheck {
  produced: number;
  lost: number;
  /** Distinct event ids at the sink, and ids it got more than once. */
  atSink: number;
  repeats: number;
}

/** Waits at most this long for the sink to have every event produced. */
const WAIT_MS = 30_000;
const POLL_MS = 500;

export async function checkUsageExport(
  gatewayUrl: string,
  adminToken: string,
  sinkUrl: string,
): Promise<ExportCheck | string> {
  const admin = adminClient(gatewayUrl, { headers: { authorization: `Bearer ${adminToken}` } });
  const stats = (await (await admin.stats.$get()).json()) as {
    data?: { isolate?: { usage_events?: number; usage_events_lost?: number } };
  };
  const produced = stats.data?.isolate?.usage_events;
  const lost = stats.data?.isolate?.usage_events_lost ?? 0;
  if (typeof produced !== 'number') return 'GET /admin/stats has no usage_events';
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const sink = (await (await fetch(sinkUrl)).json()) as { unique: number; repeats: number };
    if (sink.unique >= produced - lost || Date.now() > until) {
      return { produced, lost, atSink: sink.unique, repeats: sink.repeats };
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
