/**
 * Usage messages as CloudEvents 1.0 in the JSON format (docs/BILLING.md, "The event"):
 * what the sink receives, shaped so that OpenMeter ingests it as it is (`subject` the
 * customer, `data` the values its meters read). Made by the consumer, not on the request
 * path.
 */
import type { UsageAggregate, UsageCloudEvent, UsageMessage, UsageRecord } from '../types/billing';

/** One billable request. */
export const REQUEST_EVENT = 'com.agent-platform.gateway.request';
/** One tenant, token and operation over a minute (aggregate mode). */
export const MINUTE_EVENT = 'com.agent-platform.gateway.request.minute';

/** Requests an event stands for: one, or a minute's sum. */
export function requestsOf(e: UsageCloudEvent): number {
  return e.type === MINUTE_EVENT ? Number(e.data.requests) : 1;
}

/** The events a queue message holds: one, or a pack's (an isolate's batch). */
export function cloudEventsOf(message: UsageMessage, source: string): UsageCloudEvent[] {
  if ('kind' in message && message.kind === 'pack') {
    return message.records.map((r) => cloudEventOf(r, source));
  }
  return [cloudEventOf(message, source)];
}

export function cloudEventOf(
  message: UsageRecord | UsageAggregate,
  source: string,
): UsageCloudEvent {
  if ('kind' in message) {
    const m = message;
    const time = new Date(m.minute).toISOString();
    return {
      specversion: '1.0',
      // Derived from what it sums, so a repeat is a repeated id; a revision for late requests.
      id: `${m.tenant}/${m.token}/${m.op}/${time}${m.rev > 0 ? `/${m.rev}` : ''}`,
      source,
      type: MINUTE_EVENT,
      subject: m.tenant,
      time,
      datacontenttype: 'application/json',
      data: {
        token_id: m.token,
        operation: m.op,
        plan: m.plan,
        requests: m.requests,
        cost: m.cost,
        bytes: m.bytes,
        duration_ms: m.ms,
        errors: m.errors,
        revision: m.rev,
      },
    };
  }
  const r = message;
  return {
    specversion: '1.0',
    id: r.id,
    source,
    type: REQUEST_EVENT,
    subject: r.tenant,
    time: new Date(r.at).toISOString(),
    datacontenttype: 'application/json',
    data: {
      request_id: r.rid,
      token_id: r.token,
      ...(r.client ? { client_id: r.client } : {}),
      operation: r.op,
      plan: r.plan,
      status: r.status,
      cost: r.cost,
      duration_ms: r.ms,
      bytes: r.bytes,
      cache: r.cache,
      via: r.via,
    },
  };
}
