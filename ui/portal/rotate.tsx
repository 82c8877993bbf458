/**
 * "Rotate my token" (scope token:rotate, POST /token/rotate): the old token
 * keeps working for the overlap the partner chooses; the new one is shown
 * once, with a copy button, and becomes the portal's own token.
 */
import { useEffect, useRef, useState } from 'hono/jsx/dom';
import { ApiError, call } from '../lib/api';
import { duration } from '../lib/format';
import { useModal } from '../lib/modal';
import type { Rotated } from './types';

const MAX_OVERLAP_S = 30 * 86_400;

/** The browser's own check, the same bounds the gateway has (docs/BOUNDS.md). */
export function overlapError(text: string): string | null {
  if (!/^\d+$/.test(text.trim())) return 'Enter a whole number of seconds';
  const n = Number(text);
  if (n > MAX_OVERLAP_S) return `At most ${MAX_OVERLAP_S} seconds (30 days)`;
  return null;
}

export function RotateToken(props: { token: string; onRotated: (token: string) => void }) {
  const [overlap, setOverlap] = useState('3600');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [banner, setBanner] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState<Rotated | null>(null);
  const [copied, setCopied] = useState('');
  // Rotating asks first, as the console does: the old token's end is final.
  const [asking, setAsking] = useState(false);
  const confirm = useModal(asking, () => setAsking(false));

  // The one display of the new token takes the focus, so it is read out and can be copied at
  // once; when it is gone, the focus goes back to the rotation's heading, not to nowhere.
  const hadShown = useRef(false);
  useEffect(() => {
    if (shown) document.getElementById('new-token')?.focus();
    else if (hadShown.current) document.getElementById('rotate-title')?.focus();
    hadShown.current = shown !== null;
  }, [shown]);

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
      setShown(rotated);
      setCopied('');
    } catch (err) {
      if (err instanceof ApiError && err.fields.overlap_s) setFieldError(err.fields.overlap_s);
      else setBanner(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const copy = async () => {
    if (!shown) return;
    try {
      await navigator.clipboard.writeText(shown.token);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the token and copy it.');
    }
  };

  // Once saved, the new token leaves the page and the portal carries on with it.
  const done = () => {
    if (!shown) return;
    const next = shown.token;
    setShown(null);
    props.onRotated(next);
  };

  if (shown) {
    return (
      <div class="once" role="status">
        <p>
          <strong>Your new token, shown only this once.</strong> The old one works until{' '}
          {shown.old_token.expires_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}.
        </p>
        <label for="new-token">New token</label>
        <div class="row">
          <input id="new-token" readonly value={shown.token} size={60} />
          <button type="button" onClick={copy}>
            Copy
          </button>
        </div>
        <p aria-live="polite">{copied}</p>
        <button type="button" onClick={done}>
          I have saved it
        </button>
      </div>
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <label for="overlap">Old token keeps working for (seconds)</label>
      <div class="row">
        <input
          id="overlap"
          name="overlap_s"
          inputMode="numeric"
          value={overlap}
          aria-invalid={fieldError ? 'true' : 'false'}
          aria-describedby="overlap-hint overlap-error"
          onInput={(e: Event) => setOverlap((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Rotating…' : 'Rotate my token'}
        </button>
      </div>
      <p id="overlap-hint" class="hint">
        0 ends the old token at once; at most 30 days. Now: {duration(Number(overlap) || 0)}.
      </p>
      <p id="overlap-error" class="error" role="alert">
        {fieldError ?? ''}
      </p>
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

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) {
    const id = err.requestId ? ` (request id ${err.requestId})` : '';
    return `${err.message} [${err.code}]${id}`;
  }
  return 'The gateway could not be reached';
}
