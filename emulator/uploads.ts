// POST /session/upload (the current client, version 0.3.2): multipart/form-data with
// one or more `files` and an optional `session_id`; answers a list of {file_url,
// file_name}. The body was read, and its progress noted, by record.ts.
import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { requireKey } from './auth';
import { badRequest, type EmuEnv, ok } from './http';
import { findSession } from './sessions';
import type { UploadedFile } from './types';

/** The largest file the platform's client sends. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

export const uploadRoutes = new Hono<EmuEnv>().post(
  '/session/upload',
  requireKey('x-api-key'),
  async (c) => {
    const raw = c.get('raw');
    if (!raw) throw badRequest('the body must be multipart/form-data');
    let form: FormData;
    try {
      form = await new Response(raw, {
        headers: { 'content-type': c.req.header('content-type') ?? '' },
      }).formData();
    } catch {
      throw badRequest('the body is not valid multipart/form-data');
    }
    const files = form.getAll('files').filter((f): f is File => typeof f !== 'string');
    if (files.length === 0) throw badRequest('files is required');
    const sessionId = form.get('session_id');
    const session = typeof sessionId === 'string' && sessionId ? findSession(c, sessionId) : null;
    const stored: UploadedFile[] = [];
    for (const file of files) {
      if (file.size > MAX_FILE_BYTES) throw badRequest(`${file.name} is larger than 10 MiB`);
      const digest = createHash('sha256')
        .update(new Uint8Array(await file.arrayBuffer()))
        .digest('hex')
        .slice(0, 16);
      stored.push({
        file_url: `https://files.emulator.invalid/${digest}/${encodeURIComponent(file.name)}`,
        file_name: file.name,
      });
    }
    c.get('account').dashboard.uploads.push(...stored);
    session?.attachments.push(...stored);
    return ok<UploadedFile[]>(c, stored);
  },
);
