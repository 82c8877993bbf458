/** `calls.list` and `calls.filter_values`: credit consumption history and its filter values. */
import * as z from 'zod';
import { invalidField } from '../errors';
import type { PlatformOperation, PlatformReader, ValidatedInput } from '../types/operations';
import { dateField, enumField, orderedPair, pageNum, pageSize, textField } from './schemas';

export const callOperations: PlatformOperation[] = [
  {
    id: 'calls.filter_values',
    title: 'Call-history filter values',
    description:
      "The values calls.list's filters accept for this account: `api_key_names`, `platforms` and `states` (the `status` values). Read it before filtering calls.list by status.",
    method: 'GET',
    path: '/user/call/filter_values',
    credential: 'authorization',
    group: 'calls',
    cache: { ttl_s: 300, grace_s: 3600 },
  },
  {
    id: 'calls.list',
    title: 'Credit consumption history',
    description:
      "The account's call records (the credits each call spent), newest first unless `order_field` (created_at or total_cost) and `order` (desc or asc) say otherwise. Narrow it by `platform` (all, engine, extension or api), `api_key_name`, `status` (one of calls.filter_values' states) and the days `start_date` to `end_date` (YYYY-MM-DD, start not after end); a page at a time (`page_num`, `page_size`).",
    method: 'GET',
    path: '/user/call/lists',
    credential: 'x-api-key',
    group: 'calls',
    check: statusIsAKnownState,
    query: z
      .strictObject({
        page_num: pageNum(),
        page_size: pageSize(10),
        platform: enumField('platform', ['all', 'engine', 'extension', 'api']).default('all'),
        api_key_name: textField('api_key_name', 128, 1).optional(),
        start_date: dateField('start_date').optional(),
        end_date: dateField('end_date').optional(),
        order_field: enumField('order_field', ['created_at', 'total_cost']).default('created_at'),
        order: enumField('order', ['desc', 'asc']).default('desc'),
        status: textField('status', 64).optional(),
      })
      .superRefine(orderedPair('start_date', 'end_date')),
  },
];

/**
 * calls.list's status must be one of the `states` calls.filter_values returns for this tenant
 * (read through the cache).
 */
async function statusIsAKnownState(
  { query }: ValidatedInput,
  platform: PlatformReader,
): Promise<void> {
  const status = query.status;
  if (typeof status !== 'string' || status === '') return;
  const data = await platform.data('calls.filter_values');
  const raw = typeof data === 'object' && data !== null ? Reflect.get(data, 'states') : undefined;
  // The spec types `states` as one string; the emulator and live data send a list.
  const states = Array.isArray(raw)
    ? raw.map(String)
    : typeof raw === 'string'
      ? raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  if (!states.includes(status)) {
    throw invalidField('query', 'status', `status must be one of ${states.join(', ')}`, states);
  }
}
