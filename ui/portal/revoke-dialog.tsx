/** "Revoke …?": the one confirmation the portal asks before ending an app's access or a key. */
import { useModal } from '../lib/modal';

export function RevokeDialog(props: {
  /** What is to be revoked; null: the dialog is closed. */
  name: string | null;
  id: string;
  message: string;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const confirm = useModal(props.name !== null, props.onCancel);
  return (
    <dialog ref={confirm.ref} aria-labelledby={props.id} onClose={confirm.onClose}>
      <h3 id={props.id}>Revoke {props.name}?</h3>
      <p>{props.message}</p>
      <div class="row">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" onClick={props.onConfirm}>
          Revoke now
        </button>
      </div>
    </dialog>
  );
}
