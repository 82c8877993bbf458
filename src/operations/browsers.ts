/** `browser.*`: browser instances and their pages (x-api-key operations). */
import * as z from 'zod';
import type { PlatformOperation } from '../types/operations';
import { opaqueId, pageNum, pageSize } from './schemas';

const browserParams = z.object({ browser_id: opaqueId('browser_id') });

export const browserOperations: PlatformOperation[] = [
  {
    id: 'browser.info',
    title: 'Get a browser instance',
    description:
      'One browser instance by its `browser_id` (from browser.list or a session): its state and its session.',
    method: 'GET',
    path: '/browser/info/:browser_id',
    credential: 'x-api-key',
    group: 'browsers',
    params: browserParams,
  },
  {
    id: 'browser.list',
    title: 'List browser instances',
    description:
      "The account's browser instances, a page at a time (`page_num`, `page_size`); `session_id` narrows them to one session's.",
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
    title: 'Release a browser instance',
    description:
      'Closes the browser instance `browser_id` and gives it back; a session that used it has no browser from then on. It cannot be undone.',
    method: 'DELETE',
    path: '/browser/release/:browser_id',
    credential: 'x-api-key',
    group: 'browsers',
    params: browserParams,
  },
  {
    id: 'browser.pages',
    title: "List a browser's pages",
    description:
      'The pages open in the browser instance `browser_id`, a page at a time (`page_num`, `page_size`).',
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
