/** Reading a fleet file written by hand (YAML), for the CLI: the `yaml` package. */
import { parseDocument } from 'yaml';

export class FleetYamlError extends Error {}

/** The file's data; a FleetYamlError naming the first line YAML could not read. */
export function fleetFromYaml(text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const at = error.linePos?.[0];
    const where = at ? `line ${at.line}, column ${at.col}: ` : '';
    throw new FleetYamlError(`${where}${error.message.split('\n')[0]}`);
  }
  return doc.toJS({ maxAliasCount: 0 });
}
