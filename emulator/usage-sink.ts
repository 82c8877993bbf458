// A local sink for the gateway's usage export (docs/BILLING.md): receives batches of
// CloudEvents (application/cloudevents-batch+json), checks each batch's signature when
// it knows the key, keeps each event once by id and counts repeats, and can be taken
// down and brought back. `npm start` points the gateway at /__emulator/usage/main, where
// the events can be read (GET, `?subject=<tenant id>` for one tenant's).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { ApiError, type EmuEnv } from './http';

/** A signature older than this is refused (a replayed capture). */
const SIGNATURE_TOLERANCE_S = 300;
/** Events kept per receiver (oldest dropped first), so a long dev session stays small. */
const MAX_EVENTS = 200_000;
const MAX_DELIVERIES = 200;

interface SinkEvent {
  id: string;
  subject?: string;
  type?: string;
  [field: string]: unknown;
}

interface Delivery {
  at: string;
  events: number;
  status: number;
  kid: string | null;
  verified: boolean | null;
}

export class UsageSink {
  /** Each event once, as first received, in order; and how often each id came. */
  events: SinkEvent[] = [];
  seen = new Map<string, number>();
  received = 0;
  deliveries: Delivery[] = [];
  down = false;

  constructor(private readonly secret: string | undefined) {}

  /** Whether `header` (t=…,kid=…,v1=…) signs `body`; null when no key is known here. */
  verify(header: string | undefined, body: string): boolean | null {
    if (!this.secret) return null;
    const parts = Object.fromEntries(
      (header ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]),
    );
    const t = Number(parts.t);
    if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > SIGNATURE_TOLERANCE_S) {
      return false;
    }
    const want = createHmac('sha256', this.secret).update(`${t}.${body}`).digest();
    const got = Buffer.from(parts.v1 ?? '', 'hex');
    return got.length === want.length && timingSafeEqual(got, want);
  }

  take(events: SinkEvent[]): void {
    for (const e of events) {
      this.received++;
      const times = this.seen.get(e.id) ?? 0;
      this.seen.set(e.id, times + 1);
      if (times > 0) continue;
      this.events.push(e);
      if (this.events.length > MAX_EVENTS) {
        const gone = this.events.shift();
        if (gone) this.seen.delete(gone.id);
      }
    }
  }

  note(d: Delivery): void {
    this.deliveries.push(d);
    if (this.deliveries.length > MAX_DELIVERIES) this.deliveries.shift();
  }

  /** What GET shows: the events (one tenant's with `subject`), and repeats by id. */
  view(subject: string | undefined) {
    const events = subject ? this.events.filter((e) => e.subject === subject) : this.events;
    let repeats = 0;
    for (const e of events) repeats += (this.seen.get(e.id) ?? 1) - 1;
    return {
      down: this.down,
      unique: events.length,
      repeats,
      received: subject ? events.length + repeats : this.received,
      deliveries: this.deliveries,
      events,
    };
  }
}

export function usageSinkRoutes(secret: string | undefined) {
  const sinks = new Map<string, UsageSink>();
  const sink = (name: string) => {
    let s = sinks.get(name);
    if (!s) {
      s = new UsageSink(secret);
      sinks.set(name, s);
    }
    return s;
  };
  return new Hono<EmuEnv>()
    .post('/:name', async (c) => {
      const s = sink(c.req.param('name'));
      const body = await c.req.text();
      const signature = c.req.header('x-gateway-signature');
      const kid = /kid=([^,]+)/.exec(signature ?? '')?.[1] ?? null;
      const answer = (status: number, verified: boolean | null, events = 0) => {
        s.note({ at: new Date().toISOString(), events, status, kid, verified });
        return c.json({ ok: status === 200 }, status as 200);
      };
      if (s.down) return answer(503, null);
      if (c.req.header('content-type') !== 'application/cloudevents-batch+json') {
        return answer(415, null);
      }
      const verified = s.verify(signature, body);
      if (verified === false) return answer(401, false);
      let events: SinkEvent[];
      try {
        events = JSON.parse(body) as SinkEvent[];
        if (!Array.isArray(events) || !events.every((e) => typeof e?.id === 'string')) {
          throw new Error();
        }
      } catch {
        return answer(400, verified);
      }
      s.take(events);
      return answer(200, verified, events.length);
    })
    .get('/:name', (c) => c.json(sink(c.req.param('name')).view(c.req.query('subject'))))
    .post('/:name/down', async (c) => {
      const input = (await c.req.json().catch(() => null)) as { down?: unknown } | null;
      if (typeof input?.down !== 'boolean')
        throw new ApiError(400, 10400, 'down must be true or false');
      sink(c.req.param('name')).down = input.down;
      return c.json({ ok: true });
    })
    .delete('/:name', (c) => {
      sinks.delete(c.req.param('name'));
      return c.json({ ok: true });
    });
}
