/**
 * "Revoke …?": the one confirmation the portal asks before ending an app's access or a
 * key, and the table cell that asks it (or says when it was revoked).
 */
import { fmtTime } from '../lib/format';
import { useModal } from '../lib/modal';

/** A row's last cell: when it was revoked, or the button that asks to revoke it. */
export function RevokeCell(props: {
  name: string;
  revokedAt: string | null;
  onRevoke: () => void;
}) {
  return (
    <td>
      {props.revokedAt ? (
        `revoked ${fmtTime(props.revokedAt)}`
      ) : (
        <button type="button" class="secondary" onClick={props.onRevoke}>
          Revoke {props.name}
        </button>
      )}
    </td>
  );
}

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
