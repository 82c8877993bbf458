// All mutable emulator state in one object: accounts (per-account data),
// recorded requests and registered faults. One instance per emulator.
import { FIRST_FREE_KEY_ID, seedAccounts } from './seed';
import type { Account, ApiKey } from './types';

export interface RecordedRequest {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>; // names lower-cased
  body: string | null;
  at: string;
  /** Multipart bodies: bytes received, and whether the body arrived whole (not cut off). */
  bytes?: number;
  complete?: boolean;
}

export const FAULT_KINDS = [
  'status',
  'html',
  'invalid_json',
  'bad_envelope',
  'platform_error',
  'hang',
  'reset',
  'large_body',
  'gzip_bomb',
  'slow_body',
  'redirect',
  'lost_answer',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  id: number;
  request_id?: string;
  path?: string;
  kind: FaultKind;
  status: number;
  delay_ms: number;
  remaining: number;
  /** large_body and gzip_bomb: how many bytes the (inflated) body has. */
  bytes: number;
  /** large_body: whether Content-Length is sent. */
  content_length: boolean;
  /** large_body and gzip_bomb: the character the body is filled with (a multi-byte one counts as more). */
  char: string;
  /** redirect: the Location header sent, if any. */
  location?: string;
  /** status: a Retry-After header sent with it, as given (seconds or a date). */
  retry_after?: string;
  /** Matches only requests carrying this platform key (Authorization or x-api-key). */
  platform_key?: string;
  /** Matches only requests of this lane (`/__lane/<name>/…`, see app.ts). */
  lane?: string;
  /** Active for this long from registration, however many requests it meets (`times` ignored). */
  until?: number;
  /** While active, alternates: `flap_ms` failing, then `flap_ms` answering normally. */
  flap_ms?: number;
  /** Fails one matching request in `every` (2: every other one); the others pass. */
  every?: number;
  /** When it was registered, ms since the epoch. */
  since: number;
  /** Matching requests seen (for `every`). */
  seen: number;
}

/** A webhook delivery the emulator received (for the gateway's quota alerts). */
export interface WebhookDelivery {
  headers: Record<string, string>;
  body: string;
  received_at: string;
  failed: boolean;
}

/** Old records are dropped beyond this, so a long dev session cannot grow memory forever. */
const MAX_RECORDS = 5000;
const MAX_RECEIVING = 100;

export class EmulatorState {
  accounts: Account[] = seedAccounts();
  nextKeyId = FIRST_FREE_KEY_ID;
  requests: RecordedRequest[] = [];
  faults: Fault[] = [];
  /** Webhook deliveries by receiver name, and how many of the next ones must fail (with which status). */
  webhooks = new Map<
    string,
    { deliveries: WebhookDelivery[]; failNext: number; failStatus: number; failLocation?: string }
  >();
  /** Multipart bodies arriving, by x-request-id: bytes so far, and whether they ended. */
  receiving = new Map<string, { bytes: number; done: boolean }>();
  // Sequence numbers stay monotonic across resets so a record is never mistaken for a newer one.
  private seq = 0;
  private faultSeq = 0;

  reset(): void {
    this.accounts = seedAccounts();
    this.nextKeyId = FIRST_FREE_KEY_ID;
    this.requests = [];
    this.faults = [];
    this.webhooks.clear();
    this.counts.clear();
    this.receiving.clear();
  }

  /** Notes a multipart body's progress (at most MAX_RECEIVING kept, oldest dropped first). */
  noteReceiving(requestId: string, bytes: number, done: boolean): void {
    this.receiving.delete(requestId);
    this.receiving.set(requestId, { bytes, done });
    if (this.receiving.size > MAX_RECEIVING) {
      const oldest = this.receiving.keys().next().value;
      if (oldest !== undefined) this.receiving.delete(oldest);
    }
  }

  webhook(name: string) {
    let hook = this.webhooks.get(name);
    if (!hook) {
      hook = { deliveries: [], failNext: 0, failStatus: 500 };
      this.webhooks.set(name, hook);
    }
    return hook;
  }

  /** The account and key record a secret belongs to, if any. */
  findKey(secret: string): { account: Account; key: ApiKey } | undefined {
    for (const account of this.accounts) {
      const key = account.keys.find((k) => k.api_key === secret);
      if (key) return { account, key };
    }
    return undefined;
  }

  /** Platform requests received, by lane ('' for none): what load scripts count. */
  counts = new Map<string, number>();

  count(lane: string): void {
    this.counts.set(lane, (this.counts.get(lane) ?? 0) + 1);
  }

  record(r: Omit<RecordedRequest, 'seq' | 'at'>): void {
    this.requests.push({ seq: ++this.seq, ...r, at: new Date().toISOString() });
    if (this.requests.length > MAX_RECORDS)
      this.requests.splice(0, this.requests.length - MAX_RECORDS);
  }

  requestsFor(requestId: string | undefined): RecordedRequest[] {
    return requestId === undefined
      ? this.requests
      : this.requests.filter((r) => r.headers['x-request-id'] === requestId);
  }

  addFault(f: Omit<Fault, 'id' | 'since' | 'seen'>, now = Date.now()): Fault {
    const fault = { id: ++this.faultSeq, ...f, since: now, seen: 0 };
    this.faults.push(fault);
    return fault;
  }

  /**
   * Consumes one use of the oldest fault matching this request. A fault with a
   * request_id matches only that exact x-request-id (so parallel tests stay
   * independent); a path, when given, must prefix the request path; a
   * platform_key or lane, when given, must be the request's. A timed fault
   * (`until`) matches until it ends, or only in its failing periods when it
   * flaps; `every` lets the others through.
   */
  takeFault(
    path: string,
    requestId: string | undefined,
    extra: { key?: string; lane?: string; now?: number } = {},
  ): Fault | undefined {
    const now = extra.now ?? Date.now();
    this.faults = this.faults.filter((f) => f.until === undefined || f.until > now);
    const fault = this.faults.find(
      (f) =>
        (f.request_id === undefined || f.request_id === requestId) &&
        (f.path === undefined || path.startsWith(f.path)) &&
        (f.platform_key === undefined || f.platform_key === extra.key) &&
        (f.lane === undefined || f.lane === (extra.lane ?? '')),
    );
    if (!fault) return undefined;
    if (fault.flap_ms !== undefined && Math.floor((now - fault.since) / fault.flap_ms) % 2 === 1) {
      return undefined;
    }
    if (fault.every !== undefined && fault.seen++ % fault.every !== 0) return undefined;
    if (fault.until !== undefined) return fault;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults = this.faults.filter((f) => f !== fault);
    return fault;
  }
}
