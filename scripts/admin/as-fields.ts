/**
 * What the operator CLI prints for an answer without a layout of its own (tenant get,
 * plan get, limits set, …): one `name  value` line per field, names aligned, a nested
 * object indented under its name, a list of plain values on one line, a list of objects
 * as numbered blocks. `--json` prints the data itself instead.
 *
 *   id      ten_…
 *   name    Acme
 *   scopes  teams:read, sessions:write
 *   limits
 *     daily  10000
 */
export function asFields(value: unknown, indent = ''): string {
  if (!isRecord(value)) return `${indent}${plain(value)}`;
  const names = Object.keys(value);
  if (names.length === 0) return `${indent}(empty)`;
  const width = Math.max(...names.map((n) => n.length));
  return names.map((name) => field(name.padEnd(width), value[name], indent)).join('\n');
}

function field(name: string, value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (isRecord(value) && Object.keys(value).length > 0) {
    return `${indent}${name.trimEnd()}\n${asFields(value, inner)}`;
  }
  if (Array.isArray(value) && value.some(isRecord)) {
    const blocks = value.map((item, i) => `${inner}[${i + 1}]\n${asFields(item, `${inner}  `)}`);
    return `${indent}${name.trimEnd()}\n${blocks.join('\n')}`;
  }
  return `${indent}${name}  ${plain(value)}`;
}

function plain(value: unknown): string {
  if (value === null || value === undefined) return '–';
  if (Array.isArray(value)) return value.length ? value.map(plain).join(', ') : '(none)';
  if (isRecord(value)) return '(none)';
  return String(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
