/**
 * What the platform said of a platform key to one cheap read (POST /admin/keys/check, or
 * .../key/check for a tenant's stored key), in words: the console and the CLI say it alike.
 * The key itself never comes back.
 */
import type { KeyCheck } from '../../src/types/wire';

export function keyCheckText(r: KeyCheck): string {
  switch (r.result) {
    case 'valid':
      return `The platform accepted this key (HTTP ${r.status}, ${r.ms} ms).`;
    case 'unauthorized':
      return `The platform refused this key (HTTP ${r.status}): it is not a working key of a platform account.`;
    case 'unreachable':
      return `The platform could not be reached (no answer, ${r.ms} ms): the key could not be checked.`;
    default:
      return `The platform answered HTTP ${r.status}${r.code !== null ? ` with code ${r.code}` : ''}: the key could not be confirmed.`;
  }
}
