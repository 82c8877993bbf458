/**
 * "Check key": what the platform said of a platform key to one cheap read
 * (POST /admin/keys/check, or .../key/check for a tenant's stored key), in words.
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

/** The check's outcome, announced; styled by what it means. */
export function KeyCheckNote(props: { result: KeyCheck; id: string }) {
  const cls = props.result.result === 'valid' ? 'notice' : 'warning';
  return (
    <p class={cls} id={props.id} role="status" data-testid="key-check">
      {keyCheckText(props.result)}
    </p>
  );
}
