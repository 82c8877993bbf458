/** `session.*`: sessions and their messages (x-api-key operations). */
import * as z from 'zod';
import {
  dateTimeField,
  opaqueId,
  orderedPair,
  pageNum,
  pageSize,
  textField,
  uuidField,
} from './schemas';
import type { RouteSpec } from './types';

/** Longest task text accepted for a new session (docs/BOUNDS.md). */
export const TASK_MAX_CHARS = 20_000;
export const TITLE_MAX_CHARS = 200;

const sessionParams = z.object({ session_id: opaqueId('session_id') });

export const sessionRoutes: RouteSpec[] = [
  {
    id: 'session.create',
    method: 'POST',
    path: '/session/create',
    credential: 'x-api-key',
    group: 'sessions',
    // Starting a session starts agents and a browser: far dearer than a read, and slower.
    cost: 5,
    timeoutMs: 30_000,
    body: z.strictObject({
      team_id: uuidField('team_id'),
      task: textField('task', TASK_MAX_CHARS).default(''),
      title: textField('title', TITLE_MAX_CHARS).optional(),
    }),
  },
  {
    id: 'session.info',
    method: 'GET',
    path: '/session/info/:session_id',
    credential: 'x-api-key',
    group: 'sessions',
    params: sessionParams,
  },
  {
    id: 'session.rename',
    method: 'PUT',
    path: '/session/info/:session_id',
    credential: 'x-api-key',
    group: 'sessions',
    params: sessionParams,
    // The live client repeats session_id in the body; it must match the path.
    body: z.strictObject({
      title: textField('title', TITLE_MAX_CHARS, 1),
      session_id: opaqueId('session_id').optional(),
    }),
  },
  {
    id: 'session.messages',
    method: 'GET',
    path: '/session/message/lists',
    credential: 'x-api-key',
    group: 'sessions',
    query: z
      .strictObject({
        session_id: opaqueId('session_id'),
        page_num: pageNum(),
        page_size: pageSize(20),
        role: textField('role', 32, 1).optional(),
        content: textField('content', 500, 1).optional(),
        from_timestamp: dateTimeField('from_timestamp').optional(),
        to_timestamp: dateTimeField('to_timestamp').optional(),
      })
      .superRefine(orderedPair('from_timestamp', 'to_timestamp')),
  },
  {
    id: 'session.messages_between',
    method: 'GET',
    path: '/session/message/between',
    credential: 'x-api-key',
    group: 'sessions',
    query: z.strictObject({
      session_id: opaqueId('session_id'),
      from_message_id: opaqueId('from_message_id'),
      to_message_id: opaqueId('to_message_id'),
    }),
  },
];
