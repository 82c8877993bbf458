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
  // Sequence numbers stay monotonic across resets so a record is never mistaken for a newer one.
  private seq = 0;
  private faultSeq = 0;

  reset(): void {
    this.accounts = seedAccounts();
    this.nextKeyId = FIRST_FREE_KEY_ID;
    this.requests = [];
    this.faults = [];
    this.webhooks.clear();
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

  addFault(f: Omit<Fault, 'id'>): Fault {
    const fault = { id: ++this.faultSeq, ...f };
    this.faults.push(fault);
    return fault;
  }

  /**
   * Consumes one use of the oldest fault matching this request. A fault with a
   * request_id matches only that exact x-request-id (so parallel tests stay
   * independent); a path, when given, must prefix the request path.
   */
  takeFault(path: string, requestId: string | undefined): Fault | undefined {
    const fault = this.faults.find(
      (f) =>
        (f.request_id === undefined || f.request_id === requestId) &&
        (f.path === undefined || path.startsWith(f.path)),
    );
    if (!fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults = this.faults.filter((f) => f !== fault);
    return fault;
  }
}
