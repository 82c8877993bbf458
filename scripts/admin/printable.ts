/** Output of the operator CLI. */

/**
 * Text as it may reach a terminal: control characters other than line breaks
 * and tabs (terminal escapes, say, in a name set through the API) are shown
 * as \xNN instead of being obeyed.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (ch) => {
    return `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}
