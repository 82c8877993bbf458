/**
 * The fleet file as YAML (docs/CONFIG-AS-CODE.md): what `config dump` writes and the
 * console's "Download as file" saves, alike to the byte. Written here (block style, a
 * string plain where YAML reads it back as that same string, else double-quoted as JSON,
 * which YAML reads alike), so the console carries no YAML library; the CLI reads files
 * with the `yaml` package (scripts/admin/config.ts). The gateway itself takes JSON only.
 */

/** The file's first line: what it is, and where its schema is. */
export const FLEET_FILE_HEADER =
  '# Edge gateway fleet file (docs/CONFIG-AS-CODE.md); schema: GET /admin/config/schema\n';

export function fleetToYaml(file: unknown): string {
  return `${FLEET_FILE_HEADER}${yamlOf(file)}\n`;
}

/** Any JSON value as block YAML. */
export function yamlOf(value: unknown): string {
  return isBlock(value) ? block(value, '').join('\n') : inline(value);
}

type Block = Record<string, unknown> | unknown[];

const isBlock = (v: unknown): v is Block =>
  typeof v === 'object' && v !== null && Object.keys(v).length > 0;

function block(value: Block, indent: string): string[] {
  const out: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isBlock(item) && !Array.isArray(item)) {
        // A mapping in a list: its first key on the dash's line.
        const inner = block(item, `${indent}  `);
        out.push(`${indent}- ${(inner[0] ?? '').slice(indent.length + 2)}`, ...inner.slice(1));
      } else if (isBlock(item)) {
        out.push(`${indent}-`, ...block(item, `${indent}  `));
      } else out.push(`${indent}- ${inline(item)}`);
    }
    return out;
  }
  for (const [key, item] of Object.entries(value)) {
    if (isBlock(item)) out.push(`${indent}${text(key)}:`, ...block(item, `${indent}  `));
    else out.push(`${indent}${text(key)}: ${inline(item)}`);
  }
  return out;
}

function inline(value: unknown): string {
  if (Array.isArray(value)) return '[]';
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return '{}';
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'boolean') return String(value);
  return text(String(value));
}

/** Words YAML (1.1 or 1.2) could read as something other than a string. */
const KEYWORDS = /^(true|false|null|yes|no|on|off|y|n)$/i;
/** A string YAML reads back as itself, unquoted: from a letter, no `: ` or ` #`, no ending `:`. */
const PLAIN = /^[A-Za-z][\w./@+:()-]*(?: [\w./@+:()-]+)*$/;

function text(s: string): string {
  const plain = PLAIN.test(s) && !KEYWORDS.test(s) && !s.endsWith(':') && !s.includes(': ');
  return plain ? s : JSON.stringify(s);
}
