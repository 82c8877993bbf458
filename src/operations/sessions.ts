/** `session.*`: sessions and their messages (x-api-key operations). */
import * as z from 'zod';
import type { PlatformOperation } from '../types/operations';
import {
  dateTimeField,
  enumField,
  jsonObjectField,
  opaqueId,
  orderedPair,
  pageNum,
  pageSize,
  textField,
  uuidField,
  wordField,
} from './schemas';

/** Longest task text accepted for a new session (docs/BOUNDS.md). */
export const TASK_MAX_CHARS = 20_000;
export const TITLE_MAX_CHARS = 200;
/** session.create's `extra`: as JSON, at most this many characters and levels (docs/BOUNDS.md). */
export const EXTRA_MAX_CHARS = 16_384;
export const EXTRA_MAX_DEPTH = 8;
/** Most file parts in one upload (docs/BOUNDS.md). */
export const UPLOAD_MAX_FILES = 20;

const sessionParams = z.object({ session_id: opaqueId('session_id') });

/**
 * session.create's two shapes: the specification's `{team_id, task, title}` and the
 * current client's `{task, intent_id, mode, platform, extra}` (PLATFORM.md, version 0.3.2).
 * A body is one or the other: team_id and title belong to the first; intent_id, mode,
 * platform and extra to the second; task to both.
 */
const CURRENT_SHAPE = ['intent_id', 'mode', 'platform', 'extra'] as const;

const createBody = z
  .strictObject({
    team_id: uuidField('team_id').optional(),
    task: textField('task', TASK_MAX_CHARS).optional(),
    title: textField('title', TITLE_MAX_CHARS).optional(),
    intent_id: opaqueId('intent_id').optional(),
    mode: wordField('mode').optional(),
    platform: wordField('platform').optional(),
    extra: jsonObjectField('extra', EXTRA_MAX_CHARS, EXTRA_MAX_DEPTH).optional(),
  })
  .superRefine((body, ctx) => {
    const shapes = 'send {team_id, task, title} or {task, intent_id, mode, platform, extra}';
    if (body.team_id !== undefined) {
      for (const name of CURRENT_SHAPE) {
        if (body[name] === undefined) continue;
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `${name} is not sent with team_id: ${shapes}`,
        });
      }
    } else if (body.title !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['title'],
        message: `title goes with team_id: ${shapes}`,
      });
    } else if (body.task === undefined) {
      ctx.addIssue({ code: 'custom', path: ['task'], message: `task is required: ${shapes}` });
    }
  })
  // The specification's default for the earlier shape, sent upstream explicitly.
  .transform((body) =>
    body.team_id !== undefined && body.task === undefined ? { ...body, task: '' } : body,
  );

export const sessionOperations: PlatformOperation[] = [
  {
    id: 'session.create',
    title: 'Start a session',
    description:
      "Starts a session: the platform's agents begin work on `task` with a browser of their own. Send `{team_id, task, title}` (a team from team.list) or `{task, intent_id, mode, platform, extra}` (`mode` names a session kind such as marketing; `extra` is a JSON object); a field of one shape is refused in the other. Answers `{session_id}`: follow the work with session.info and session.messages.",
    effect: { openWorld: true },
    method: 'POST',
    path: '/session/create',
    credential: 'x-api-key',
    group: 'sessions',
    // Starting a session starts agents and a browser: far dearer than a read, and slower.
    cost: 5,
    timeoutMs: 30_000,
    body: createBody,
  },
  {
    id: 'session.info',
    title: 'Get a session',
    description:
      'One session by its `session_id` (from session.create): its title, its state, its team and its browser.',
    method: 'GET',
    path: '/session/info/:session_id',
    credential: 'x-api-key',
    group: 'sessions',
    params: sessionParams,
  },
  {
    id: 'session.rename',
    title: 'Rename a session',
    description: 'Sets the `title` of the session `session_id`.',
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
    title: "List a session's messages",
    description:
      'The messages of the session `session_id`, a page at a time (`page_num`, `page_size`). Narrow them by `role`, by text in `content`, and by time with `from_timestamp` and `to_timestamp` (ISO 8601 with a zone, from not after to). Each message has its id and `session_round`.',
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
    title: 'Messages between two message ids',
    description:
      'The messages of the session `session_id` from `from_message_id` to `to_message_id` (ids that session.messages gives), as one list.',
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
  {
    id: 'session.marketing_data',
    title: "A marketing session's data",
    description:
      'What a marketing session (session.create with mode marketing) has gathered; `type` (reply, like, retweet or tweet) narrows it.',
    method: 'GET',
    path: '/session/marketing/data/:session_id',
    credential: 'x-api-key',
    group: 'sessions',
    params: sessionParams,
    query: z.strictObject({
      type: enumField('type', ['reply', 'like', 'retweet', 'tweet']).optional(),
    }),
  },
  {
    id: 'session.upload',
    title: 'Upload files',
    description:
      "Uploads files for the platform's agents (multipart/form-data, streamed): answers each file's URL.",
    method: 'POST',
    path: '/session/upload',
    credential: 'x-api-key',
    group: 'sessions',
    // Up to MAX_UPLOAD_BYTES streamed through: heavier than a plain write, lighter than a session.
    cost: 3,
    // The deadline covers the caller's own upload of the body too (docs/RESILIENCE.md).
    timeoutMs: 30_000,
    upload: {
      fileField: 'files',
      fields: z.strictObject({ session_id: opaqueId('session_id').optional() }),
      maxFiles: UPLOAD_MAX_FILES,
    },
  },
];
