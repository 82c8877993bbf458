/** `browser.*`: browser instances and their pages (x-api-key operations). */
import * as z from 'zod';
import { opaqueId, pageNum, pageSize } from './schemas';
import type { RouteSpec } from './types';

const browserParams = z.object({ browser_id: opaqueId('browser_id') });

export const browserRoutes: RouteSpec[] = [
  {
    id: 'browser.info',
    method: 'GET',
    path: '/browser/info/:browser_id',
    credential: 'x-api-key',
    group: 'browsers',
    params: browserParams,
  },
  {
    id: 'browser.list',
    method: 'GET',
    path: '/browser/lists',
    credential: 'x-api-key',
    group: 'browsers',
    query: z.strictObject({
      session_id: opaqueId('session_id').optional(),
      page_num: pageNum(),
      page_size: pageSize(20),
    }),
  },
  {
    id: 'browser.release',
    method: 'DELETE',
    path: '/browser/release/:browser_id',
    credential: 'x-api-key',
    group: 'browsers',
    params: browserParams,
  },
  {
    id: 'browser.pages',
    method: 'GET',
    path: '/browser/page/lists',
    credential: 'x-api-key',
    group: 'browsers',
    query: z.strictObject({
      browser_id: opaqueId('browser_id'),
      page_num: pageNum(),
      page_size: pageSize(20),
    }),
  },
];
