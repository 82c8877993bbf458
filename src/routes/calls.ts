/** 4.4 and 4.7: credit consumption history and its filter values. */
import { z } from 'zod';
import { dateField, enumField, noQuery, orderedPair, pageNum, pageSize, textField } from './schemas';
import type { RouteSpec } from './types';

export const callRoutes: RouteSpec[] = [
  {
    id: 'calls.filter_values',
    section: '4.4',
    method: 'GET',
    path: '/user/call/filter_values',
    upstreamPath: '/user/call/filter_values',
    credential: 'authorization',
    group: 'calls',
    query: noQuery(),
  },
  {
    id: 'calls.list',
    section: '4.7',
    method: 'GET',
    path: '/user/call/lists',
    upstreamPath: '/user/call/lists',
    credential: 'x-api-key',
    group: 'calls',
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
