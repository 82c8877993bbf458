/**
 * The operator API over HTTP, for the CLI: the client typed from the operations'
 * definitions (src/admin/client.ts), one envelope a call, clear errors.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { ErrorData } from '../../src/types/wire';
import {
  type AdminClient,
  type Answered,
  adminClient,
  type Envelope,
} from '../../ui/lib/admin-client';

export class CliError extends Error {}

export interface Client {
  url: string;
  /** The operator API's routes, typed: `api.admin.tenants[':id'].$get(...)`. */
  admin: AdminClient;
  /** The data of a call's success envelope; a CliError for anything else. */
  data<T>(call: Promise<Answered<Envelope<T>>>): Promise<T>;
}

/**
 * ADMIN_TOKEN from the environment, else, for a gateway on this machine only,
 * from the local .dev.vars that `npm start` writes.
 */
export function adminToken(url: string): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const local = /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/.test(url);
  if (local && existsSync('.dev.vars')) {
    const m = /^ADMIN_TOKEN=(.+)$/m.exec(readFileSync('.dev.vars', 'utf8'));
    if (m) return m[1]!.trim();
  }
  throw new CliError(
    'No operator token: set ADMIN_TOKEN (for the local dev gateway it is read from .dev.vars).',
  );
}

/** Loopback hosts, where plain http never leaves this machine. */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * Refuses to send the operator token in the clear: plain http is only for a
 * gateway on this machine (npm start); anything else must be https.
 */
export function assertSafeTransport(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`--url ${url} is not a URL`);
  }
  if (parsed.protocol === 'https:') return;
  if (parsed.protocol === 'http:' && LOOPBACK.test(parsed.hostname)) return;
  throw new CliError(
    `Refusing to send the operator token to ${parsed.origin} over plain http: use https ` +
      '(plain http only for a gateway on this machine, such as npm start).',
  );
}

/** `from`: where the URL came from (`--url`, GATEWAY_URL, PORT, npm start's note), for errors. */
export function client(url: string, token: string, from = '--url'): Client {
  assertSafeTransport(url);
  const base = url.replace(/\/+$/, '');
  const admin = adminClient(base, {
    headers: { authorization: `Bearer ${token}` },
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      try {
        return await fetch(input, { ...init, signal: AbortSignal.timeout(30_000) });
      } catch {
        throw new CliError(
          `Cannot reach the gateway at ${base} (from ${from}): is it running (npm start)? ` +
            'Name another with --url.',
        );
      }
    },
  });
  return {
    url: base,
    admin,
    async data<T>(call: Promise<Answered<Envelope<T>>>): Promise<T> {
      const res = await call;
      let envelope: Envelope<T>;
      try {
        envelope = await res.json();
      } catch {
        throw new CliError(
          `The gateway at ${base} answered HTTP ${res.status} without a JSON envelope: is --url a gateway?`,
        );
      }
      if (envelope.code !== 0) {
        const { request_id } = (envelope.data ?? {}) as Partial<ErrorData>;
        const rid = request_id ? ` (request id ${request_id})` : '';
        throw new CliError(`${envelope.msg} [code ${envelope.code}, HTTP ${res.status}]${rid}`);
      }
      return envelope.data;
    },
  };
}
