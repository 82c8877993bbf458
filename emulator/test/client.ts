// Test client for the emulator tests: each test file starts its own emulator
// on a free loopback port (useEmulator) and talks to it over real HTTP.
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { DEMO_USER_ID, OTHER_USER_ID, seedAccounts } from '../seed';
import { type RunningEmulator, startEmulator } from '../server';
import type { Account, Envelope } from '../types';

export interface CallOptions {
  /** Request headers, e.g. `auth(key)` or `xKey(key)`. */
  headers?: Record<string, string>;
  /** Sent as JSON; a string is sent as is (still labelled JSON). */
  body?: unknown;
  /** Sent as x-request-id (what faults and the request log match on). */
  requestId?: string;
  signal?: AbortSignal;
}

/** What a client sees of an answer. */
export interface Reply {
  status: number;
  contentType: string;
  headers: Headers;
  text: string;
}

export const auth = (key: string): Record<string, string> => ({ authorization: key });
export const xKey = (key: string): Record<string, string> => ({ 'x-api-key': key });

export const UNAUTHORIZED_TEXT =
  '{"code":401,"msg":"Unauthorized: invalid or missing API key","data":null}';
export const NOT_FOUND_TEXT = '{"code":404,"msg":"Not Found","data":null}';

function seededAccount(userId: string): Account {
  const account = seedAccounts().find((a) => a.user_id === userId);
  if (!account) throw new Error(`no seeded account ${userId}`);
  return account;
}
/** The data the emulator starts with (and returns to on reset). */
export const seeded = { demo: seededAccount(DEMO_USER_ID), other: seededAccount(OTHER_USER_ID) };

/** The first element, failing the test when there is none. */
export function first<T>(items: readonly T[]): T {
  const item = items[0];
  if (item === undefined) throw new Error('expected at least one item');
  return item;
}

export function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`expected an item at ${index} of ${items.length}`);
  return item;
}

export class EmulatorClient {
  constructor(private readonly base: () => string) {}

  get url(): string {
    return this.base();
  }

  /** Any request; the whole body is read as text. */
  async fetch(method: string, path: string, o: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.requestId !== undefined) headers['x-request-id'] = o.requestId;
    const init: RequestInit = { method, headers };
    if (o.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    }
    if (o.signal) init.signal = o.signal;
    const res = await fetch(this.url + path, init);
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      headers: res.headers,
      text: await res.text(),
    };
  }

  /** A request whose answer must be a JSON envelope (any status). */
  async envelope<T = null>(
    method: string,
    path: string,
    o: CallOptions = {},
  ): Promise<{ status: number; body: Envelope<T> }> {
    const reply = await this.fetch(method, path, o);
    expect(reply.contentType).toMatch(/^application\/json/);
    return { status: reply.status, body: JSON.parse(reply.text) as Envelope<T> };
  }

  /** A request that must succeed (HTTP 200, code 0, msg Success); its data. */
  async data<T>(method: string, path: string, o: CallOptions = {}): Promise<T> {
    const { status, body } = await this.envelope<T>(method, path, o);
    expect({ status, code: body.code, msg: body.msg }).toEqual({
      status: 200,
      code: 0,
      msg: 'Success',
    });
    return body.data;
  }

  /** A request that must fail with this HTTP status and envelope code; its message. */
  async failure(
    method: string,
    path: string,
    o: CallOptions,
    expected: { status: number; code: number },
  ): Promise<string> {
    const { status, body } = await this.envelope(method, path, o);
    expect({ status, code: body.code, data: body.data }).toEqual({ ...expected, data: null });
    return body.msg;
  }

  /** A control request (no auth, plain JSON) that must answer 200; its JSON. */
  async control<T>(method: string, path: string, body?: unknown): Promise<T> {
    const reply = await this.fetch(
      method,
      `/__emulator${path}`,
      body === undefined ? {} : { body },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.contentType).toMatch(/^application\/json/);
    return JSON.parse(reply.text) as T;
  }
}

/**
 * Starts an emulator for this test file (fresh seeded state, free 127.0.0.1
 * port) and closes it after the file. With `resetEach`, the state is reset
 * before every test so tests do not depend on each other's changes.
 */
export function useEmulator(
  opts: { resetEach?: boolean; latencyMs?: number } = {},
): EmulatorClient {
  let running: RunningEmulator | undefined;
  beforeAll(async () => {
    running = await startEmulator({ port: 0, host: '127.0.0.1', latencyMs: opts.latencyMs });
  });
  afterAll(async () => {
    await running?.close();
  });
  const client = new EmulatorClient(() => {
    if (!running) throw new Error('emulator not started');
    return running.url;
  });
  if (opts.resetEach)
    beforeEach(async () => {
      await client.control('POST', '/reset');
    });
  return client;
}
