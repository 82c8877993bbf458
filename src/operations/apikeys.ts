/** `apikey.create`, `apikey.delete` and `apikey.list`: the platform's API keys. */
import * as z from 'zod';
import type { PlatformOperation } from '../types/operations';
import { intField, pageNum, pageSize, textField } from './schemas';

export const apiKeyOperations: PlatformOperation[] = [
  {
    id: 'apikey.create',
    title: 'Create a platform API key',
    description:
      "Creates an API key on the platform account behind this gateway and answers it once as `api_key`. `name` labels it in apikey.list and in calls.list's `api_key_name` filter.",
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
    title: 'Delete a platform API key',
    description:
      'Deletes the platform API key whose numeric `id` apikey.list gives. Calls made with that key fail from then on; it cannot be undone.',
    method: 'DELETE',
    path: '/user/apikey/delete/:id',
    credential: 'authorization',
    group: 'apikeys',
    params: z.object({ id: intField('id', 1, Number.MAX_SAFE_INTEGER) }),
  },
  {
    id: 'apikey.list',
    title: 'List the platform API keys',
    description:
      "Lists the platform account's API keys a page at a time (`page_num`, `page_size`), each with its id, name, creation time and key. Its `id`s are what apikey.delete takes.",
    method: 'GET',
    path: '/user/apikey/lists',
    credential: 'authorization',
    group: 'apikeys',
    secrets: true,
    query: z.strictObject({ page_num: pageNum(), page_size: pageSize(10) }),
  },
];
