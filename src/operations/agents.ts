/** `agent.list` and `agent.info`: agents (x-api-key operations). */
import * as z from 'zod';
import type { PlatformOperation } from '../types/operations';
import { enumField, pageNum, pageSize, uuidField } from './schemas';

export const agentOperations: PlatformOperation[] = [
  {
    id: 'agent.list',
    title: 'List agents',
    description:
      'Lists the agents the account can use, a page at a time (`page_num`, `page_size`); `agent_type` (all, system or user) narrows it.',
    method: 'GET',
    path: '/agent/lists',
    credential: 'x-api-key',
    group: 'agents',
    query: z.strictObject({
      agent_type: enumField('agent_type', ['all', 'system', 'user']).optional(),
      page_num: pageNum(),
      page_size: pageSize(10),
    }),
  },
  {
    id: 'agent.info',
    title: 'Get an agent',
    description:
      'One agent by its `agent_id` (a UUID from agent.list or a team): its name, description and system message.',
    method: 'GET',
    path: '/agent/info/:agent_id',
    credential: 'x-api-key',
    group: 'agents',
    params: z.object({ agent_id: uuidField('agent_id') }),
  },
];
