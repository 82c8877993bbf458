/**
 * An upload's `multipart/form-data` body, passed to the platform as it arrives
 * and never buffered whole (docs/API.md, "Uploading files"):
 * - 415 unless it is multipart/form-data with a boundary;
 * - 413 at once when its Content-Length is over MAX_UPLOAD_BYTES, else as soon
 *   as the stream runs past it, after at most that many bytes were read;
 * - each part must be a file under the operation's file field (at most `maxFiles`)
 *   or one of its short text fields, checked by the operation's schema at the end;
 * - a refusal errors the stream, so the platform's request is cut off before its
 *   closing boundary and never completes; the caller gets the refusal;
 * - a deadline that passes while the gateway waits for the caller's next bytes is
 *   the caller's (408, upstream/fetch.ts), not the platform's;
 * - its token revoked or expired, or its tenant disabled, while it streams cuts
 *   it off too, as it closes an event stream (limits/credentials-watch.ts).
 *
 * @example const upload = uploadBody(c, spec.upload); fetch(url, { body: upload.stream })
 */
import type { Context } from 'hono';
import { type ErrorKind, GatewayError, invalidField } from '../errors';
import { type CredentialsEnd, watchCredentials } from '../limits/credentials-watch';
import type { HonoEnv } from '../types/context';
import type { UploadBody, UploadSpec } from '../types/operations';
import { boundaryOf, MalformedMultipart, MultipartScanner, type PartHead } from './multipart';

/** A text part's value may be at most this long (docs/BOUNDS.md). */
export const MAX_TEXT_PART_BYTES = 1024;
/** Longest file name accepted (docs/BOUNDS.md). */
export const MAX_FILE_NAME_CHARS = 255;

export function uploadBody(c: Context<HonoEnv>, spec: UploadSpec): UploadBody {
  const maxBytes = c.get('settings').MAX_UPLOAD_BYTES;
  const tooLarge = () =>
    new GatewayError('PAYLOAD_TOO_LARGE', {
      message: `Upload body exceeds the limit of ${maxBytes} bytes (MAX_UPLOAD_BYTES)`,
    });
  const contentType = c.req.header('content-type') ?? '';
  const boundary = boundaryOf(contentType);
  if (!boundary) {
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', {
      message: 'Request body must be multipart/form-data with a boundary',
    });
  }
  const declared = c.req.header('content-length');
  const length = declared !== undefined && /^\d{1,16}$/.test(declared) ? Number(declared) : null;
  if (length !== null && length > maxBytes) throw tooLarge();
  const source = c.req.raw.body;
  if (!source || length === 0) throw noFiles(spec);

  const parts = new PartRules(spec);
  const scanner = new MultipartScanner(boundary, parts);
  const reader = source.getReader();
  const cut = new AbortController();
  let failure: Error | null = null;
  // True while the gateway waits for the caller's next bytes (not while the platform is slow to take them).
  let awaitingCaller = false;
  let cancelled = false;
  let total = 0;
  let stopWatching: (() => void) | null = null;
  const end = () => stopWatching?.();
  /** Refuses the rest: the platform's request is cut off before its end. */
  const refuse = (err: Error) => {
    if (failure) return;
    end();
    failure = err;
    reader.cancel().catch(() => undefined);
    // Aborting the call cancels this stream, never closed: the platform's request ends cut off.
    cut.abort();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Refused already: nothing more goes on; the aborted call cancels the stream.
        if (failure) return new Promise<void>(() => undefined);
        // Watched from the first byte the platform asks for until the last is sent.
        stopWatching ??= watchCredentials(c, (why) => refuse(credentialsEndedError(why)));
        try {
          awaitingCaller = true;
          const { done, value } = await readOrBroken(reader);
          // The call was cut off, or refused, while this read waited: stop here.
          if (cancelled || failure) return;
          awaitingCaller = false;
          if (done) {
            const rest = scanner.finish();
            if (rest.byteLength > 0) controller.enqueue(rest);
            controller.close();
            end();
            return;
          }
          total += value.byteLength;
          if (total > maxBytes) throw tooLarge();
          const ready = scanner.push(value);
          if (ready.byteLength > 0) controller.enqueue(ready);
        } catch (err) {
          refuse(refusal(err));
        }
      },
      cancel(reason) {
        cancelled = true;
        end();
        return reader.cancel(reason);
      },
    },
    // Pulled only as the platform's side reads: at most a chunk or two in memory.
    { highWaterMark: 0 },
  );
  return {
    stream,
    contentType,
    length,
    failure: () => failure,
    awaitingCaller: () => awaitingCaller,
    signal: cut.signal,
    end,
  };
}

const ENDED_BY: Record<CredentialsEnd, { kind: ErrorKind; what: string }> = {
  revoked: { kind: 'TOKEN_REVOKED', what: 'The token was revoked' },
  expired: { kind: 'TOKEN_EXPIRED', what: 'The token expired' },
  disabled: { kind: 'TENANT_DISABLED', what: 'The tenant was disabled' },
};

/** The refusal of an upload whose credentials ended while it streamed. */
function credentialsEndedError(why: CredentialsEnd): GatewayError {
  const { kind, what } = ENDED_BY[why];
  return new GatewayError(kind, {
    message: `${what} while the upload was streaming; the platform's request was cut off`,
  });
}

/** The caller's body stream failing (the client went away) is its fault, not the platform's. */
async function readOrBroken(reader: ReadableStreamDefaultReader<Uint8Array>) {
  try {
    return await reader.read();
  } catch {
    throw new GatewayError('BAD_REQUEST', { message: 'The upload body broke off' });
  }
}

function refusal(err: unknown): Error {
  if (err instanceof GatewayError) return err;
  if (err instanceof MalformedMultipart) {
    return new GatewayError('BAD_REQUEST', { message: `Malformed multipart body: ${err.message}` });
  }
  return new GatewayError('BAD_REQUEST', { message: 'The upload body could not be read' });
}

const noFiles = (spec: UploadSpec) =>
  invalidField('body', spec.fileField, `${spec.fileField}: at least one file is required`);

/** What each part may be: files under the file field, else one of the text fields, once. */
class PartRules {
  private files = 0;
  private readonly textNames: string[];
  private readonly texts = new Map<string, number[]>();
  private current: number[] | null = null;

  constructor(private readonly spec: UploadSpec) {
    const shape: unknown = Reflect.get(spec.fields, 'shape');
    this.textNames = typeof shape === 'object' && shape !== null ? Object.keys(shape) : [];
  }

  part(head: PartHead): 'file' | 'text' {
    const { name, filename } = head;
    if (name === null) {
      throw new GatewayError('BAD_REQUEST', {
        message:
          'Malformed multipart body: every part needs Content-Disposition: form-data with a name',
      });
    }
    if (name === this.spec.fileField) {
      if (!filename || filename.length > MAX_FILE_NAME_CHARS || /[\p{Cc}/\\]/u.test(filename)) {
        throw invalidField(
          'body',
          name,
          `${name}: each file needs a name of 1 to ${MAX_FILE_NAME_CHARS} characters, without / \\ or control characters`,
        );
      }
      if (++this.files > this.spec.maxFiles) {
        throw invalidField('body', name, `${name}: at most ${this.spec.maxFiles} files`);
      }
      this.current = null;
      return 'file';
    }
    if (!this.textNames.includes(name)) {
      throw new GatewayError('UNKNOWN_PARAMETER', {
        message: `Unknown body parameter: ${name}`,
        details: {
          errors: [{ location: 'body', field: name, message: `${name} is not a known parameter` }],
        },
      });
    }
    if (filename !== null)
      throw invalidField('body', name, `${name} must be a text field, not a file`);
    if (this.texts.has(name)) throw invalidField('body', name, `${name} is given twice`);
    this.current = [];
    this.texts.set(name, this.current);
    return 'text';
  }

  text(bytes: Uint8Array): void {
    if (!this.current) return;
    if (this.current.length + bytes.byteLength > MAX_TEXT_PART_BYTES) {
      const name = [...this.texts].find(([, v]) => v === this.current)?.[0] ?? 'field';
      throw invalidField('body', name, `${name} must be at most ${MAX_TEXT_PART_BYTES} bytes`);
    }
    this.current.push(...bytes);
  }

  close(): void {
    if (this.files === 0) throw noFiles(this.spec);
    const values = Object.fromEntries(
      [...this.texts].map(([name, bytes]) => [
        name,
        new TextDecoder().decode(new Uint8Array(bytes)),
      ]),
    );
    const result = this.spec.fields.safeParse(values);
    if (!result.success) {
      const issue = result.error.issues[0];
      const field = String(issue?.path[0] ?? 'body');
      throw invalidField('body', field, issue?.message ?? `${field} is not valid`);
    }
  }
}
