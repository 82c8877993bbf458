/** A native dialog that stays modal under hono/jsx/dom's re-renders (the console's and the portal's). */
import { useLayoutEffect, useRef } from 'hono/jsx/dom';

/**
 * A native `<dialog>` kept modal while `open`: focus moves in, the page behind is
 * inert, Escape cancels (`onClosed`). hono/jsx/dom moves a fragment's nodes when it
 * renders them again (an error shown in the dialog, say), and a dialog taken out of
 * the document leaves the top layer: it would stay open but no longer modal. So after
 * every render an open dialog that is not modal is shown modally again, without a
 * close event, with the focus on its first field in error (or its first control).
 */
export function useModal(open: boolean, onClosed: () => void) {
  const ref = useRef<HTMLDialogElement>(null);
  // A layout effect: run before the browser paints, so no frame shows it open but not modal.
  useLayoutEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.matches(':modal')) {
      d.removeAttribute('open');
      d.showModal();
      d.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    } else if (!open && d.open) d.close();
  });
  return { ref, onClose: () => open && onClosed() };
}
