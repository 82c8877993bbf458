/** Bytes in memory, in an ordinary ArrayBuffer (what Response bodies take). */
export type Bytes = Uint8Array<ArrayBuffer>;

/**
 * Reading a body as a stream while counting bytes, so an oversized body is
 * refused after `maxBytes` have been read, never after it has been buffered
 * whole (and a compressed body is never inflated past the limit).
 */

/**
 * Reads `stream` into one array of at most `maxBytes` bytes; throws
 * `tooLarge()` as soon as more arrive.
 */
export async function readCapped(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Bytes> {
  if (!stream) return new Uint8Array();
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw tooLarge();
      chunks.push(value);
    }
  } catch (err) {
    reader.cancel().catch(() => undefined);
    throw err;
  }
  return concat(chunks, total);
}

/** The same bytes as `Bytes`; copied only if they sit in a SharedArrayBuffer. */
export function asBytes(u8: Uint8Array): Bytes {
  return u8.buffer instanceof ArrayBuffer
    ? new Uint8Array(u8.buffer, u8.byteOffset, u8.byteLength)
    : new Uint8Array(u8);
}

const decoder = new TextDecoder();

/** The text of UTF-8 bytes (malformed sequences become U+FFFD). */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** UTF-8 of a string. */
export function utf8(text: string): Bytes {
  return asBytes(new TextEncoder().encode(text));
}

function concat(chunks: Uint8Array[], total: number): Bytes {
  const only = chunks.length === 1 ? chunks[0] : undefined;
  if (only) return asBytes(only);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
