/**
 * The fleet file as YAML (docs/CONFIG-AS-CODE.md): what `config dump` writes and the
 * console's "Download as file" saves, alike to the byte, and how the CLI reads a file
 * written by hand. The gateway itself takes JSON only (the `yaml` package stays out of
 * the Worker's bundle).
 */
import { parseDocument, stringify } from 'yaml';

/** The file's first line: what it is, and where its schema is. */
export const FLEET_FILE_HEADER =
  '# Edge gateway fleet file (docs/CONFIG-AS-CODE.md); schema: GET /admin/config/schema\n';

export function fleetToYaml(file: unknown): string {
  return (
    FLEET_FILE_HEADER + stringify(file, { lineWidth: 0, indent: 2, aliasDuplicateObjects: false })
  );
}

export class FleetYamlError extends Error {}

/** The file's data; a FleetYamlError naming the first line YAML could not read. */
export function fleetFromYaml(text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const at = error.linePos?.[0];
    throw new FleetYamlError(
      `${at ? `line ${at.line}, column ${at.col}: ` : ''}${error.message.split('\n')[0]}`,
    );
  }
  return doc.toJS({ maxAliasCount: 0 });
}
