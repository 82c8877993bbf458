/**
 * One field on a row beside its button, its hint below it and its error announced
 * (role=alert), wired by id: the portal's sign-in and its token rotation.
 */
import type { Child } from 'hono/jsx';

export function FieldRow(p: {
  id: string;
  label: string;
  /** The input's own attributes (name, type, value, onInput…). */
  input: Record<string, unknown>;
  button: Child;
  hint: Child;
  error: string | null | undefined;
}) {
  return (
    <>
      <label for={p.id}>{p.label}</label>
      <div class="row">
        <input
          id={p.id}
          {...p.input}
          aria-invalid={p.error ? 'true' : 'false'}
          aria-describedby={`${p.id}-hint ${p.id}-error`}
        />
        {p.button}
      </div>
      <p id={`${p.id}-hint`} class="hint">
        {p.hint}
      </p>
      <p id={`${p.id}-error`} class="error" role="alert">
        {p.error ?? ''}
      </p>
    </>
  );
}
