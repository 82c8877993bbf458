/**
 * Reads a `multipart/form-data` body as it streams, without keeping it: each
 * chunk comes back as the bytes that may go on, less a few held until they are
 * understood (a boundary that may straddle two chunks, a part's headers). The
 * caller (upload.ts) decides what each part may be; its hooks throw to refuse.
 * The closing boundary is held until `close` agreed, so a refused body never
 * reaches its end upstream.
 *
 * @example const scan = new MultipartScanner(boundary, hooks); out.enqueue(scan.push(chunk));
 */
import { decodeUtf8 } from '../bytes';

/** What a part says of itself in its Content-Disposition. */
export interface PartHead {
  name: string | null;
  /** The file name (`filename`, or `filename*` decoded); null for a text field. */
  filename: string | null;
}

export interface ScanHooks {
  /** A part begins: what it carries, or a throw. */
  part(head: PartHead): 'file' | 'text';
  /** Bytes of a text part's value, in order. */
  text(bytes: Uint8Array): void;
  /** The closing boundary arrived: the last chance to refuse. */
  close(): void;
}

/** Why a body is no multipart body. */
export class MalformedMultipart extends Error {}

/** A part's header block may be at most this long (docs/BOUNDS.md). */
export const MAX_PART_HEADER_BYTES = 8 * 1024;

const CR = 13;
const LF = 10;
const DASH = 45;
const HEADER_END = new Uint8Array([CR, LF, CR, LF]);

type State = 'start' | 'delimiter' | 'headers' | 'content' | 'closed';

export class MultipartScanner {
  /** `--boundary`, which the body starts with. */
  private readonly first: Uint8Array;
  /** `\r\n--boundary`, which ends every part. */
  private readonly next: Uint8Array;
  private state: State = 'start';
  private part: 'file' | 'text' = 'file';
  /** Bytes received but not yet passed on. */
  private held: Uint8Array = new Uint8Array(0);
  /** How far into `held` the reading has got. */
  private offset = 0;

  constructor(
    boundary: string,
    private readonly hooks: ScanHooks,
  ) {
    const encoded = new TextEncoder().encode(`\r\n--${boundary}`);
    this.next = encoded;
    this.first = encoded.subarray(2);
  }

  /** Reads a chunk; returns the bytes that may go on now (maybe none). */
  push(chunk: Uint8Array): Uint8Array {
    const buf = this.held.byteLength === 0 ? chunk : concat(this.held, chunk);
    let pos = this.offset;
    // Bytes before `release` may go on; those from it are held for the next chunk.
    let release = 0;
    scan: for (;;) {
      switch (this.state) {
        case 'start':
          if (buf.byteLength - pos < this.first.byteLength) break scan;
          if (!startsWith(buf, pos, this.first)) {
            throw new MalformedMultipart('the body must start with its boundary');
          }
          pos += this.first.byteLength;
          this.state = 'delimiter';
          break;
        case 'delimiter': {
          if (buf.byteLength - pos < 2) break scan;
          const [a, b] = [buf[pos], buf[pos + 1]];
          if (a === DASH && b === DASH) {
            this.hooks.close();
            this.state = 'closed';
            pos = buf.byteLength;
            release = pos;
            break scan;
          }
          if (a !== CR || b !== LF) {
            throw new MalformedMultipart('a boundary must be followed by a line break or --');
          }
          pos += 2;
          this.state = 'headers';
          break;
        }
        case 'headers': {
          const end = indexOf(buf, HEADER_END, pos);
          const length = (end === -1 ? buf.byteLength : end) - pos;
          if (length > MAX_PART_HEADER_BYTES) {
            throw new MalformedMultipart(
              `a part's headers must be at most ${MAX_PART_HEADER_BYTES} bytes`,
            );
          }
          if (end === -1) break scan;
          this.part = this.hooks.part(partHead(decodeUtf8(buf.subarray(pos, end))));
          pos = end + HEADER_END.byteLength;
          release = pos;
          this.state = 'content';
          break;
        }
        case 'content': {
          const at = indexOf(buf, this.next, pos);
          // Without a boundary yet, all but its length less one may go: the rest may begin one.
          const upTo = at === -1 ? Math.max(pos, buf.byteLength - this.next.byteLength + 1) : at;
          if (this.part === 'text' && upTo > pos) this.hooks.text(buf.subarray(pos, upTo));
          release = upTo;
          if (at === -1) {
            pos = upTo;
            break scan;
          }
          // The boundary itself is held until its next two bytes tell whether it closes the body.
          pos = at + this.next.byteLength;
          this.state = 'delimiter';
          break;
        }
        case 'closed':
          // The epilogue, if any, goes on as it is.
          pos = buf.byteLength;
          release = pos;
          break scan;
      }
    }
    this.held = buf.slice(release);
    this.offset = pos - release;
    return buf.subarray(0, release);
  }

  /** The body ended: the bytes still held, or a throw if it never closed. */
  finish(): Uint8Array {
    if (this.state !== 'closed') {
      throw new MalformedMultipart('the body ended before its closing boundary');
    }
    return this.held;
  }
}

/** `multipart/form-data; boundary=…` → the boundary (RFC 2046: 1 to 70 characters), or null. */
export function boundaryOf(contentType: string): string | null {
  const [type, ...params] = splitParams(contentType);
  if (type?.toLowerCase() !== 'multipart/form-data') return null;
  const boundary = params.find(([name]) => name === 'boundary')?.[1];
  return boundary && /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary)
    ? boundary
    : null;
}

/** A part's header block → its name and file name (Content-Disposition: form-data). */
function partHead(block: string): PartHead {
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
    const [kind, ...params] = splitParams(line.slice(colon + 1));
    if (kind?.toLowerCase() !== 'form-data') break;
    const value = (name: string) => params.find(([n]) => n === name)?.[1];
    const encoded = value('filename*');
    return {
      name: value('name') ?? null,
      filename: fileName(encoded) ?? value('filename') ?? null,
    };
  }
  return { name: null, filename: null };
}

/** RFC 5987 `UTF-8''caf%C3%A9.txt` → `café.txt`; undefined when absent or malformed. */
function fileName(encoded: string | undefined): string | undefined {
  const match = encoded && /^utf-8''(.*)$/i.exec(encoded);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1] ?? '');
  } catch {
    return undefined;
  }
}

/** `type; a=1; b="x; y"` → `type` and its parameters (names lower-cased, quotes undone). */
function splitParams(header: string): [string | undefined, ...[string, string][]] {
  const semicolon = header.indexOf(';');
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim();
  const params: [string, string][] = [];
  const rest = semicolon === -1 ? '' : header.slice(semicolon);
  for (const m of rest.matchAll(/;\s*([A-Za-z0-9*_.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g)) {
    const raw = (m[2] ?? '').trim();
    const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
    params.push([(m[1] ?? '').toLowerCase(), value]);
  }
  return [type, ...params];
}

function startsWith(buf: Uint8Array, at: number, prefix: Uint8Array): boolean {
  for (let i = 0; i < prefix.byteLength; i++) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

/** Where `pattern` first occurs in `buf` from `from`, or -1 (the first byte found natively). */
function indexOf(buf: Uint8Array, pattern: Uint8Array, from: number): number {
  const head = pattern[0] ?? 0;
  const last = buf.byteLength - pattern.byteLength;
  for (let at = buf.indexOf(head, from); at !== -1 && at <= last; at = buf.indexOf(head, at + 1)) {
    if (startsWith(buf, at, pattern)) return at;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}
