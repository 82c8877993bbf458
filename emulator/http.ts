// Envelope, error and input-parsing helpers shared by the platform routes.

import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
// The gateway's paging bounds, from the one file both read (docs/BOUNDS.md, "Paging").
import { PAGE_NUM_MAX, PAGE_SIZE_MAX, PAGE_SIZE_MIN } from '../src/operations/bounds';
import type { EmulatorState } from './store';
import type { Account, ApiKey, Envelope, Paged } from './types';

export type EmuEnv = {
  Bindings: Partial<HttpBindings>; // absent when the app is driven in-process via app.request()
  Variables: {
    state: EmulatorState;
    account: Account;
    key: ApiKey;
    body: string | null;
    /** A multipart body's bytes as received (record.ts); null for any other request. */
    raw: Uint8Array<ArrayBuffer> | null;
  };
};
export type Ctx = Context<EmuEnv>;

/** A failure answered with the platform envelope; `status` is the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const envelope = <T>(code: number, msg: string, data: T): Envelope<T> => ({
  code,
  msg,
  data,
});
export const ok = <T>(c: Ctx, data: T) => c.json(envelope(0, 'Success', data));
export const badRequest = (msg: string) => new ApiError(400, 10400, msg);
/** The platform reports a missing record with HTTP 200 and a non-zero code. */
export const notFound = (what: string) => new ApiError(200, 10404, `${what} not found`);

/** Integer query value within bounds, or the default when absent or empty. */
export function intParam(c: Ctx, name: string, def: number, min: number, max: number): number {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return def;
  if (!/^-?\d+$/.test(raw)) throw badRequest(`${name} must be an integer`);
  const n = Number(raw);
  if (n < min || n > max) throw badRequest(`${name} must be between ${min} and ${max}`);
  return n;
}

/** Query value that must be one of `allowed`; empty counts as absent. */
export function enumParam<T extends string>(
  c: Ctx,
  name: string,
  allowed: readonly T[],
  def: T,
): T {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return def;
  if (!(allowed as readonly string[]).includes(raw))
    throw badRequest(`${name} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

export function requiredParam(c: Ctx, name: string): string {
  const raw = c.req.query(name);
  if (!raw) throw badRequest(`${name} is required`);
  return raw;
}

export function pageParams(c: Ctx, defSize: number): { page_num: number; page_size: number } {
  return {
    page_num: intParam(c, 'page_num', 1, 1, PAGE_NUM_MAX),
    page_size: intParam(c, 'page_size', defSize, PAGE_SIZE_MIN, PAGE_SIZE_MAX),
  };
}

export function slicePage<T>(items: T[], p: { page_num: number; page_size: number }): T[] {
  return items.slice((p.page_num - 1) * p.page_size, p.page_num * p.page_size);
}

/** The paged list wrapper of spec 2.1. */
export function paged<T>(items: T[], p: { page_num: number; page_size: number }): Paged<T> {
  return {
    ...p,
    total: items.length,
    total_page: Math.ceil(items.length / p.page_size),
    data: slicePage(items, p),
  };
}

/** The recorded request body parsed as a JSON object (requests with a body are JSON per the spec). */
export function jsonBody(c: Ctx): Record<string, unknown> {
  const raw = c.get('body');
  if (raw === null) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest('request body must be JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw badRequest('request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

export function optString(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badRequest(`${name} must be a string`);
  return v;
}
