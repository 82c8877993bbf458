/**
 * "Check key": what the platform said of a platform key, announced beside the key's
 * field (the words are ui/lib/key-check.ts's, which the CLI says too).
 */
import type { KeyCheck } from '../../src/types/wire';
import { keyCheckText } from '../lib/key-check';

/** The check's outcome, announced; styled by what it means. */
export function KeyCheckNote(props: { result: KeyCheck; id: string }) {
  const cls = props.result.result === 'valid' ? 'notice' : 'warning';
  return (
    <p class={cls} id={props.id} role="status" data-testid="key-check">
      {keyCheckText(props.result)}
    </p>
  );
}
