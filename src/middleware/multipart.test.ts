import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundaryOf, MalformedMultipart, MultipartScanner, type PartHead } from './multipart';

const BOUNDARY = 'xYz-boundary_42';
const encoder = new TextEncoder();

function body(parts: { name: string; filename?: string; content: string }[], epilogue = '') {
  const text = parts
    .map((p) => {
      const file = p.filename === undefined ? '' : `; filename="${p.filename}"`;
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"${file}\r\n\r\n${p.content}\r\n`;
    })
    .join('');
  return encoder.encode(`${text}--${BOUNDARY}--\r\n${epilogue}`);
}

/** Runs a body through the scanner in the given chunks; what came out, and what it saw. */
function scan(bytes: Uint8Array, cuts: number[]) {
  const heads: PartHead[] = [];
  const texts: string[] = [];
  let closed = false;
  let text = '';
  const scanner = new MultipartScanner(BOUNDARY, {
    part(head) {
      heads.push(head);
      if (head.filename === null) {
        if (text) texts.push(text);
        text = '';
        return 'text';
      }
      return 'file';
    },
    text(chunk) {
      text += new TextDecoder().decode(chunk);
    },
    close() {
      if (text) texts.push(text);
      closed = true;
    },
  });
  const out: number[] = [];
  let from = 0;
  for (const at of [
    ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b),
    bytes.length,
  ]) {
    out.push(...scanner.push(bytes.subarray(from, at)));
    from = at;
  }
  out.push(...scanner.finish());
  return { out: new Uint8Array(out), heads, texts, closed };
}

describe('MultipartScanner', () => {
  const sample = body(
    [
      { name: 'session_id', content: 'sess_1' },
      {
        name: 'files',
        filename: 'a.csv',
        content: `x,y\r\n1,2\r\n--${BOUNDARY.slice(0, 5)} not a boundary`,
      },
      { name: 'files', filename: 'b.txt', content: '' },
    ],
    'epilogue',
  );

  it('passes every byte on unchanged, however the body is cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: sample.length }), { maxLength: 30 }), (cuts) => {
        const { out, heads, texts, closed } = scan(sample, cuts);
        expect(out).toEqual(sample);
        expect(heads).toEqual([
          { name: 'session_id', filename: null },
          { name: 'files', filename: 'a.csv' },
          { name: 'files', filename: 'b.txt' },
        ]);
        expect(texts).toEqual(['sess_1']);
        expect(closed).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('holds the closing boundary back until close agreed: a refusal sends no end', () => {
    const scanner = new MultipartScanner(BOUNDARY, {
      part: () => 'file',
      text: () => undefined,
      close() {
        throw new Error('refused');
      },
    });
    const passed: number[] = [];
    const bytes = body([{ name: 'files', filename: 'a', content: 'abc' }]);
    expect(() => {
      for (const b of bytes) passed.push(...scanner.push(new Uint8Array([b])));
    }).toThrow('refused');
    expect(new TextDecoder().decode(new Uint8Array(passed))).not.toContain(`--${BOUNDARY}--`);
  });

  it('refuses what is no multipart body', () => {
    const hooks = { part: () => 'file' as const, text: () => undefined, close: () => undefined };
    const cases = [
      'not multipart at all, but long enough',
      `--${BOUNDARY}xx`,
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"\r\n\r\nnever ends`,
    ];
    for (const text of cases) {
      const scanner = new MultipartScanner(BOUNDARY, hooks);
      expect(() => {
        scanner.push(encoder.encode(text));
        scanner.finish();
      }, text).toThrow(MalformedMultipart);
    }
    const long = new MultipartScanner(BOUNDARY, hooks);
    expect(() => long.push(encoder.encode(`--${BOUNDARY}\r\nX-Pad: ${'a'.repeat(9000)}`))).toThrow(
      "a part's headers must be at most 8192 bytes",
    );
  });

  it('reads RFC 5987 file names and quoted parameters', () => {
    const heads: PartHead[] = [];
    const scanner = new MultipartScanner(BOUNDARY, {
      part: (h) => {
        heads.push(h);
        return 'file';
      },
      text: () => undefined,
      close: () => undefined,
    });
    scanner.push(
      encoder.encode(
        `--${BOUNDARY}\r\ncontent-disposition: form-data; name="files"; filename="x.txt"; filename*=UTF-8''caf%C3%A9.txt\r\n\r\nx\r\n` +
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a;b"; filename="q\\"uote.txt"\r\n\r\nx\r\n--${BOUNDARY}--`,
      ),
    );
    expect(heads).toEqual([
      { name: 'files', filename: 'café.txt' },
      { name: 'a;b', filename: 'q"uote.txt' },
    ]);
  });
});

describe('boundaryOf', () => {
  it.each([
    ['multipart/form-data; boundary=abc', 'abc'],
    ['Multipart/Form-Data; charset=utf-8; boundary="a b:c"', 'a b:c'],
    ['multipart/form-data', null],
    ['multipart/mixed; boundary=abc', null],
    ['application/json', null],
    [`multipart/form-data; boundary=${'x'.repeat(71)}`, null],
    ['multipart/form-data; boundary="ends with space "', null],
  ])('%s → %s', (type, expected) => {
    expect(boundaryOf(type)).toBe(expected);
  });
});
