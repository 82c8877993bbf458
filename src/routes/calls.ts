/** `calls.list` and `calls.filter_values`: credit consumption history and its filter values. */
import * as z from 'zod';
import { invalidField } from '../errors';
import type { ValidatedInput } from '../types/routes';
import { dateField, enumField, orderedPair, pageNum, pageSize, textField } from './schemas';
import type { PlatformReader, RouteSpec } from './types';

export const callRoutes: RouteSpec[] = [
  {
    id: 'calls.filter_values',
    method: 'GET',
    path: '/user/call/filter_values',
    credential: 'authorization',
    group: 'calls',
    cache: { ttl_s: 300, grace_s: 3600 },
  },
  {
    id: 'calls.list',
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
