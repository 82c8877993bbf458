/**
 * "Rotate my token" (scope token:rotate, POST /token/rotate): the old token
 * keeps working for the overlap the partner chooses; the new one is shown
 * once at the top of the page, with a copy button, and becomes the portal's own token.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import { ApiError, call } from '../lib/api';
import { duration } from '../lib/format';
import { useModal } from '../lib/modal';
import { FieldRow } from './field-row';
import type { Rotated } from './types';

const MAX_OVERLAP_S = 30 * 86_400;

/** The browser's own check, the same bounds the gateway has (docs/BOUNDS.md). */
export function overlapError(text: string): string | null {
  if (!/^\d+$/.test(text.trim())) return 'Enter a whole number of seconds';
  const n = Number(text);
  if (n > MAX_OVERLAP_S) return `At most ${MAX_OVERLAP_S} seconds (30 days)`;
  return null;
}

/**
 * The rotation form: the overlap, asked first in a dialog. A rotation made hands the new
 * token to `onRotated`, which shows it once at the top of the page (NewTokenOnce).
 */
export function RotateToken(props: { token: string; onRotated: (rotated: Rotated) => void }) {
  const [overlap, setOverlap] = useState('3600');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [banner, setBanner] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Rotating asks first, as the console does: the old token's end is final.
  const [asking, setAsking] = useState(false);
  const confirm = useModal(asking, () => setAsking(false));

  const submit = (e: Event) => {
    e.preventDefault();
    setBanner(null);
    const error = overlapError(overlap);
    setFieldError(error);
    if (error) return;
    setAsking(true);
  };

  const rotate = async (e: Event) => {
    e.preventDefault();
    setAsking(false);
    setBusy(true);
    try {
      const rotated = await call<Rotated>('/token/rotate', {
        method: 'POST',
        body: { overlap_s: Number(overlap) },
        headers: { authorization: `Bearer ${props.token}` },
      });
      props.onRotated(rotated);
    } catch (err) {
      if (err instanceof ApiError && err.fields.overlap_s) setFieldError(err.fields.overlap_s);
      else setBanner(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <FieldRow
        id="overlap"
        label="Old token keeps working for (seconds)"
        input={{
          name: 'overlap_s',
          inputMode: 'numeric',
          value: overlap,
          onInput: (e: Event) => setOverlap((e.target as HTMLInputElement).value),
        }}
        button={
          <button type="submit" disabled={busy}>
            {busy ? 'Rotating…' : 'Rotate my token'}
          </button>
        }
        hint={
          <>0 ends the old token at once; at most 30 days. Now: {duration(Number(overlap) || 0)}.</>
        }
        error={fieldError}
      />
      {banner && (
        <p class="error" role="alert">
          {banner}
        </p>
      )}
      <dialog ref={confirm.ref} aria-labelledby="rotate-confirm-title" onClose={confirm.onClose}>
        <h3 id="rotate-confirm-title">Rotate your token?</h3>
        <p>
          A new token is made and shown once. This token keeps working for{' '}
          {duration(Number(overlap) || 0)}
          {Number(overlap) === 0 ? ' (it stops at once)' : ''}, then stops for good: every client
          must have switched by then.
        </p>
        <div class="row">
          <button type="button" class="secondary" onClick={() => setAsking(false)}>
            Cancel
          </button>
          <button type="button" onClick={rotate}>
            Rotate now
          </button>
        </div>
      </dialog>
    </form>
  );
}

/**
 * The new token of a rotation, shown once at the top of the page, under the token it
 * replaces: it takes the focus, so it is read out and can be copied at once. "I have
 * saved it" drops it from the page and the portal carries on with it (`onSaved`); the
 * focus then goes back to the rotation's heading.
 */
export function NewTokenOnce(props: { rotated: Rotated; onSaved: (token: string) => void }) {
  const [copied, setCopied] = useState('');
  useEffect(() => {
    document.getElementById('new-token')?.focus();
  }, []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.rotated.token);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the token and copy it.');
    }
  };
  return (
    <section class="once" aria-labelledby="new-token-title" role="status">
      <h2 id="new-token-title">The token that replaces this one</h2>
      <p>
        <strong>Shown only this once.</strong> The token this page runs on now works until{' '}
        {props.rotated.old_token.expires_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}.
      </p>
      <label for="new-token">New token</label>
      <div class="row">
        <input id="new-token" readonly value={props.rotated.token} size={60} />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p aria-live="polite">{copied}</p>
      <button type="button" onClick={() => props.onSaved(props.rotated.token)}>
        I have saved it
      </button>
    </section>
  );
}

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) {
    const id = err.requestId ? ` (request id ${err.requestId})` : '';
    return `${err.message} [${err.code}]${id}`;
  }
  return 'The gateway could not be reached';
}
