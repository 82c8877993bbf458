/**
 * W3C Trace Context `tracestate` (level 1, section 3.3): a list of at most 32
 * `key=value` members, separated by commas with optional spaces or tabs
 * around them. A header that breaks the list syntax is dropped whole, never
 * passed on in part (docs/RESILIENCE.md, "Traces").
 *
 *   key   = lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/")
 *         / (lcalpha / DIGIT) 0*240(...) "@" lcalpha 0*13(...)
 *   value = 0*255(chr) nblk-chr   chr = %x20 / nblk-chr
 *   nblk-chr = %x21-2B / %x2D-3C / %x3E-7E   (no comma, no "=")
 */

/** The specification's limits: members, and the length a vendor must pass on. */
export const TRACESTATE_MAX_MEMBERS = 32;
export const TRACESTATE_MAX_LENGTH = 512;

const KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The header as the list it is (members joined by `,`, empty members and the
 * spaces around members left out), or undefined when it is not a valid list:
 * a bad key or value, a repeated key, more than 32 members, or over 512 characters.
 */
export function validTracestate(header: string | undefined): string | undefined {
  if (!header || header.length > TRACESTATE_MAX_LENGTH) return undefined;
  const members = header
    .split(',')
    .map((m) => m.replace(/^[ \t]+|[ \t]+$/g, ''))
    .filter((m) => m !== '');
  if (members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  const keys = new Set<string>();
  for (const member of members) {
    const eq = member.indexOf('=');
    const key = member.slice(0, eq);
    if (eq <= 0 || !KEY.test(key) || !VALUE.test(member.slice(eq + 1)) || keys.has(key)) {
      return undefined;
    }
    keys.add(key);
  }
  return members.join(',');
}
