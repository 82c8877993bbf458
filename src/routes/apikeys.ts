/** `apikey.create`, `apikey.delete` and `apikey.list`: the platform's API keys. */
import * as z from 'zod';
import { intField, pageNum, pageSize, textField } from './schemas';
import type { RouteSpec } from './types';

export const apiKeyRoutes: RouteSpec[] = [
  {
    id: 'apikey.create',
    method: 'POST',
    path: '/user/apikey/new',
    credential: 'authorization',
    group: 'apikeys',
    secrets: true,
    cost: 5,
    body: z.strictObject({ name: textField('name', 64, 1) }),
  },
  {
    id: 'apikey.delete',
    method: 'DELETE',
    path: '/user/apikey/delete/:id',
    credential: 'authorization',
    group: 'apikeys',
    params: z.object({ id: intField('id', 1, Number.MAX_SAFE_INTEGER) }),
  },
  {
    id: 'apikey.list',
    method: 'GET',
    path: '/user/apikey/lists',
    credential: 'authorization',
    group: 'apikeys',
    secrets: true,
    query: z.strictObject({ page_num: pageNum(), page_size: pageSize(10) }),
  },
];
