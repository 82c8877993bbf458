/**
 * Edits one `key = value` line of a wrangler.toml in place, keeping every
 * other line and comment as the operator wrote them. Enough for the values
 * the deploy script writes into `[env.<name>]`; the script re-reads the file
 * with wrangler afterwards and stops if the value did not land.
 */

export type TomlValue =
  | string
  | number
  | boolean
  | TomlValue[]
  | { [key: string]: TomlValue | undefined };

/** A TOML literal on one line (strings as basic strings; JSON's escapes are TOML's). */
export function tomlLiteral(value: TomlValue): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlLiteral).join(', ')}]`;
  const pairs = Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${bareKey(k)} = ${tomlLiteral(v as TomlValue)}`);
  return pairs.length === 0 ? '{}' : `{ ${pairs.join(', ')} }`;
}

function bareKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

const HEADER = /^\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(#.*)?$/;

interface Table {
  /** Line index of the header. */
  header: number;
  /** One past the last line of the table's body. */
  end: number;
}

/** Every table called `name` (`[name]`, or each `[[name]]`), with where its body ends. */
function tables(lines: string[], name: string): Table[] {
  const found: Table[] = [];
  let open: Table | undefined;
  lines.forEach((line, i) => {
    const m = HEADER.exec(line);
    if (!m) return;
    if (open) {
      open.end = i;
      open = undefined;
    }
    if (m[2] === name) {
      open = { header: i, end: lines.length };
      found.push(open);
    }
  });
  return found;
}

function keyLine(key: string): RegExp {
  const k = key.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  return new RegExp(`^\\s*("${k}"|${k})\\s*=`);
}

/** How many lines a value starting on `lines[i]` spans (multi-line arrays and inline tables). */
function valueSpan(lines: string[], i: number): number {
  let depth = 0;
  for (let j = i; j < lines.length; j++) {
    const text = (lines[j] ?? '').replace(/"(?:[^"\\]|\\.)*"|'[^']*'/g, '""').replace(/#.*/, '');
    const from = j === i ? text.indexOf('=') + 1 : 0;
    for (const ch of text.slice(from)) {
      if (ch === '[' || ch === '{') depth++;
      else if (ch === ']' || ch === '}') depth--;
    }
    if (depth <= 0) return j - i + 1;
  }
  return lines.length - i;
}

export interface SetOptions {
  /** For an array of tables (`[[name]]`): the entry whose `key = "value"` line matches. */
  where?: { key: string; value: string };
}

/**
 * Sets `key` in table `table` (e.g. `env.production.vars`) to `value`:
 * replaces the existing line, or adds one at the end of the table's keys, or
 * appends the table (with `where`'s key for an array of tables) to the file.
 */
export function setTomlKey(
  text: string,
  table: string,
  key: string,
  value: TomlValue,
  opts: SetOptions = {},
): string {
  const lines = text.split('\n');
  const line = `${bareKey(key)} = ${tomlLiteral(value)}`;
  const where = opts.where;
  const candidates = tables(lines, table);
  const target = where
    ? candidates.find((t) =>
        lines
          .slice(t.header + 1, t.end)
          .some(
            (l) =>
              keyLine(where.key).test(l) &&
              l.slice(l.indexOf('=') + 1).trim() === JSON.stringify(where.value),
          ),
      )
    : candidates[0];
  if (!target) {
    const head = where
      ? [`[[${table}]]`, `${bareKey(where.key)} = ${JSON.stringify(where.value)}`]
      : [`[${table}]`];
    const body = text.endsWith('\n') ? text : `${text}\n`;
    return `${body}\n${[...head, line].join('\n')}\n`;
  }
  for (let i = target.header + 1; i < target.end; i++) {
    if (keyLine(key).test(lines[i] ?? '')) {
      lines.splice(i, valueSpan(lines, i), line);
      return lines.join('\n');
    }
  }
  // After the table's last key line, before trailing blank lines and comments.
  let at = target.header + 1;
  for (let i = target.header + 1; i < target.end; i++) {
    const l = (lines[i] ?? '').trim();
    if (l !== '' && !l.startsWith('#')) at = i + 1;
  }
  lines.splice(at, 0, line);
  return lines.join('\n');
}

/** Whether the file has the table `[name]`. */
export function hasTomlTable(text: string, name: string): boolean {
  return tables(text.split('\n'), name).length > 0;
}
