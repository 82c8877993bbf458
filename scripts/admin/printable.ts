/** Output of the operator CLI. */

/**
 * Text as it may reach a terminal: control characters other than line breaks
 * and tabs (terminal escapes, say, in a name set through the API) are shown
 * as \xNN instead of being obeyed.
 */
export function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    const control = (code < 0x20 && ch !== '\n' && ch !== '\t') || (code >= 0x7f && code <= 0x9f);
    out += control ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
  }
  return out;
}
