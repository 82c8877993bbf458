/** `team.list` and `team.info`: teams, each with its agents and model. */
import * as z from 'zod';
import type { PlatformOperation } from '../types/operations';
import { enumField, pageNum, pageSize, uuidField } from './schemas';

export const teamOperations: PlatformOperation[] = [
  {
    id: 'team.list',
    title: 'List teams',
    description:
      "Lists the account's teams, each with its agents and model, a page at a time (`page_num`, `page_size`); `team_type` (all, system or user) narrows it. A team's `team_id` is what session.create and team.info take.",
    method: 'GET',
    path: '/team/lists',
    credential: 'authorization',
    group: 'teams',
    cache: { ttl_s: 60, grace_s: 300 },
    query: z.strictObject({
      page_num: pageNum(),
      page_size: pageSize(10),
      team_type: enumField('team_type', ['all', 'system', 'user']).optional(),
    }),
  },
  {
    id: 'team.info',
    title: 'Get a team',
    description:
      'One team by its `team_id` (a UUID from team.list): its name, its agents and its model.',
    method: 'GET',
    path: '/team/info/:team_id',
    // The platform leaves team.info's header open; Authorization matches the
    // API key operations and team.list.
    credential: 'authorization',
    group: 'teams',
    cache: { ttl_s: 60, grace_s: 300 },
    params: z.object({ team_id: uuidField('team_id') }),
  },
];
