/**
 * Platform secrets never reach a tenant unless it may see them. Masking works
 * on the answer's structure: every non-empty string under a field whose name
 * ends in key, secret, token, password or credential (any case, snake, kebab
 * or camel: `api_key`, `apiKey`, `client_secret`; not `api_key_name`), and
 * every string that looks like a platform key (PLATFORM_KEY_PATTERN) or is
 * this tenant's own key, wherever it is. A masked key keeps its first 3 and
 * last 4 characters (`sk-…c0de`), enough to tell keys apart.
 */
import { type Bytes, decodeUtf8, utf8 } from '../bytes';

export interface SecretShapes {
  /** What a platform key looks like (the PLATFORM_KEY_PATTERN setting), global. */
  pattern: RegExp;
  /** This tenant's own platform key: masked wherever it shows up. */
  tenantKey: string;
}

const SECRET_WORDS = new Set([
  'key',
  'keys',
  'apikey',
  'secret',
  'secrets',
  'token',
  'tokens',
  'password',
  'passwd',
  'credential',
  'credentials',
]);

/** Whether a field name names a key or a secret: its last word does. */
export function isSecretField(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return SECRET_WORDS.has(words.at(-1) ?? '');
}

/**
 * A secret-named field with a non-empty string value, as it appears in JSON text: a
 * string followed by a colon is a field name, so its end is enough. The field's last
 * word is a lookbehind, so the regex tries only at quotes, not the alternation at
 * every position: 4 times cheaper on the bench's 23 KB answer, the same matches
 * (BENCHMARKS.md, "Where the CPU goes"). Anything but a letter or digit may follow the
 * word (`key_`, `api-key-`), as isSecretField reads it.
 */
const SECRET_FIELD_IN_TEXT =
  /(?<=(?:key|keys|secret|secrets|token|tokens|password|passwd|credentials?)[^A-Za-z0-9"\\]*)"\s*:\s*"[^"]/i;
/**
 * A field name with an escape in it (`"api_ke\u0079"`): only a parse can read it. Looked
 * for back from a name's end, as the field regex is: tried forward from every escape, it
 * read each long string once per escape in it (320 ms for 100 KB of text with a line
 * break every 50 characters, where this takes 0.2 ms).
 */
const ESCAPED_FIELD_IN_TEXT = /(?<=\\[\s\S](?:[^"\\]|\\[\s\S])*)"\s*:/;
/** The escapes that may write a key's characters (`\u0073`, `\/`); the rest write a quote, a backslash or a control character. */
const KEY_CHARACTER_ESCAPE = /\\[u/]/;
/** JSON's escapes, for reading the text a key may hide in. */
const ESCAPE = /\\(?:u([0-9a-fA-F]{4})|([\s\S]))/g;
const ESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** Whether the text has a secret-named field with a non-empty string value. */
export function hasSecretFieldInText(text: string): boolean {
  return (
    SECRET_FIELD_IN_TEXT.test(text) || (text.includes('\\') && ESCAPED_FIELD_IN_TEXT.test(text))
  );
}

/**
 * A cheap look at the text first: most answers hold no secret at all and are
 * passed on untouched, without a parse and a re-serialisation. Keys are looked for in
 * the text with the escapes that may hide them read, as they are in the strings a parse
 * gives; line breaks and other escapes cost nothing.
 */
export function mayHoldSecrets(text: string, shapes: SecretShapes): boolean {
  const escaped = text.includes('\\') && KEY_CHARACTER_ESCAPE.test(text);
  const plain = escaped ? withKeyEscapesRead(text) : text;
  shapes.pattern.lastIndex = 0;
  return (
    holdsTenantKey(plain, shapes.tenantKey) ||
    shapes.pattern.test(plain) ||
    hasSecretFieldInText(text)
  );
}

/**
 * Whether the text holds the tenant's key, as JSON writes it (a platform key is printable
 * ASCII: a quote or a backslash in it is escaped) or as it is.
 */
function holdsTenantKey(text: string, key: string): boolean {
  if (key === '') return false;
  const written = JSON.stringify(key).slice(1, -1);
  return text.includes(written) || (written !== key && text.includes(key));
}

/**
 * The text with `\u` and `\/` escapes read: parsed and written again, which escapes only
 * quotes, backslashes and control characters. One native pass each way, where reading each
 * escape in JavaScript took 40 ms for 200 KB of escaped text. Not JSON: every escape read.
 */
function withKeyEscapesRead(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.replace(ESCAPE, (_, hex: string | undefined, ch: string) =>
      hex ? String.fromCharCode(Number.parseInt(hex, 16)) : (ESCAPED[ch] ?? ch),
    );
  }
}

/**
 * The body with every secret masked; the same bytes when there was nothing to
 * mask. `text` is the body decoded, when the caller already has it.
 */
export function maskSecrets(body: Bytes, shapes: SecretShapes, text = decodeUtf8(body)): Bytes {
  if (!mayHoldSecrets(text, shapes)) return body;
  return utf8(JSON.stringify(mask(JSON.parse(text), shapes)));
}

export function maskKey(key: string): string {
  return key.length >= 12 ? `${key.slice(0, 3)}…${key.slice(-4)}` : '…';
}

function mask(value: unknown, shapes: SecretShapes): unknown {
  if (typeof value === 'string') return maskInString(value, shapes);
  if (Array.isArray(value)) return value.map((v) => mask(v, shapes));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretField(k) && typeof v === 'string' && v !== '' ? maskKey(v) : mask(v, shapes);
  }
  return out;
}

function maskInString(s: string, shapes: SecretShapes): string {
  let out = shapes.tenantKey ? s.split(shapes.tenantKey).join(maskKey(shapes.tenantKey)) : s;
  out = out.replace(shapes.pattern, (match) => maskKey(match));
  return out;
}
