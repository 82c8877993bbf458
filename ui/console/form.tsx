/**
 * Form pieces shared by the console's pages: a labelled field with its error
 * beside it, a draft whose errors go as its fields change, the API's refusal mapped
 * onto fields, a filter card and the pagers, a one-time secret with a copy button,
 * and a confirmation dialog.
 */
import type { Child } from 'hono/jsx';
import { useRef, useState } from 'hono/jsx/dom';
import { ApiError } from '../lib/api';
import { useModal } from '../lib/modal';

export { useModal };

export type Errors = Record<string, string>;

/** Where the API's field names (`policies.0.limit`) meet the form's; the rest is the form's error. */
export function refusal(err: unknown, fields: readonly string[]): Errors {
  if (!(err instanceof ApiError))
    return { _form: String(err instanceof Error ? err.message : err) };
  const out: Errors = {};
  const rest: string[] = [];
  for (const [field, message] of Object.entries(err.fields)) {
    const known = fields.find((f) => field === f || field.startsWith(`${f}.`));
    if (known) out[known] = message;
    else rest.push(message);
  }
  if (rest.length > 0 || Object.keys(out).length === 0) {
    const id = err.requestId ? ` (request ${err.requestId})` : '';
    out._form = `${rest.length > 0 ? rest.join('; ') : err.message} [${err.code}]${id}`;
  }
  return out;
}

/** Moves focus to the first field with an error, so a keyboard user lands on it. */
export function focusFirstError(form: HTMLElement | null, errors: Errors): void {
  const first = Object.keys(errors).find((k) => k !== '_form');
  const el = first && form?.querySelector<HTMLElement>(`[name="${first}"]`);
  if (el) el.focus();
  else form?.querySelector<HTMLElement>('.form-error')?.focus();
}

interface FieldProps {
  id: string;
  name: string;
  label: string;
  value: string;
  onValue: (v: string) => void;
  error?: string | undefined;
  hint?: string;
  type?: string;
  required?: boolean;
  autocomplete?: string;
  placeholder?: string;
  multiline?: boolean;
  inputmode?: 'numeric' | 'text';
  /** A `datetime-local` field's step (1: to the second). */
  step?: string;
}

export function Field(p: FieldProps) {
  const described = [p.hint && `${p.id}-hint`, p.error && `${p.id}-error`].filter(Boolean);
  const common = {
    id: p.id,
    name: p.name,
    value: p.value,
    'aria-invalid': p.error ? 'true' : 'false',
    'aria-describedby': described.length ? described.join(' ') : undefined,
    required: p.required,
    placeholder: p.placeholder,
    onInput: (e: Event) => p.onValue((e.target as HTMLInputElement).value),
  };
  return (
    <div class="field">
      <label for={p.id}>
        {p.label}
        {p.required ? <span aria-hidden="true"> *</span> : null}
      </label>
      {p.multiline ? (
        <textarea {...common} rows={3} />
      ) : (
        <input
          {...common}
          type={p.type ?? 'text'}
          autocomplete={p.autocomplete ?? 'off'}
          inputmode={p.inputmode}
          step={p.step}
          spellcheck={false}
        />
      )}
      {p.hint ? (
        <p class="hint" id={`${p.id}-hint`}>
          {p.hint}
        </p>
      ) : null}
      {p.error ? (
        <p class="error" id={`${p.id}-error`}>
          {p.error}
        </p>
      ) : null}
    </div>
  );
}

/**
 * A form's element and how it shows errors: `showErrors(found)` sets them and, where there
 * are any, focuses the first field at fault (true: there were); `showRefusal(err, fields)`
 * does the same with the API's refusal (refusal()).
 */
export function useFormErrors(setErrors: (errors: Errors) => void) {
  const form = useRef<HTMLFormElement>(null);
  const showErrors = (found: Errors): boolean => {
    setErrors(found);
    if (Object.keys(found).length === 0) return false;
    focusFirstError(form.current, found);
    return true;
  };
  const showRefusal = (err: unknown, fields: readonly string[]): void => {
    showErrors(refusal(err, fields));
  };
  return { form, showErrors, showRefusal };
}

/**
 * A form's draft and its errors, kept together: a field's error goes as soon as its
 * value changes (an operator who fixed a field is not told off for it until the next
 * submit). `field(name)` is a Field's `name`, `value`, `onValue` and `error`.
 */
export function useDraft<F extends Record<keyof F, string>>(initial: F) {
  const [draft, setDraftState] = useState<F>(initial);
  const [errors, setErrors] = useState<Errors>({});
  const setDraft = (next: F) => {
    const changed = (Object.keys(next) as (keyof F & string)[]).filter(
      (k) => next[k] !== draft[k] && errors[k] !== undefined,
    );
    if (changed.length > 0) {
      const kept = { ...errors };
      for (const k of changed) delete kept[k];
      setErrors(kept);
    }
    setDraftState(next);
  };
  const field = (name: keyof F & string) => ({
    name,
    value: draft[name],
    onValue: (v: string) => setDraft({ ...draft, [name]: v }),
    error: errors[name],
  });
  return { draft, setDraft, errors, setErrors, field };
}

/**
 * A card of filters (the requests, the audit log): the draft being typed, the filter
 * applied (what the page shows), the browser's own check of the draft, and the two
 * actions. `apply` checks, then applies (true) or focuses the first error (false);
 * `reset` goes back to `empty`.
 */
export function useFilters<F extends Record<keyof F, string>>(
  empty: F,
  check: (draft: F) => Errors,
  first: F = empty,
) {
  const form = useDraft<F>(first);
  const [applied, setApplied] = useState<F>(first);
  const formRef = useRef<HTMLFormElement>(null);
  return {
    ...form,
    applied,
    formRef,
    apply: (): boolean => {
      const found = check(form.draft);
      form.setErrors(found);
      if (Object.keys(found).length > 0) {
        focusFirstError(formRef.current, found);
        return false;
      }
      setApplied({ ...form.draft });
      return true;
    },
    /** Sets the fields and applies them at once (a preset such as "the last hour"). */
    applyValues: (values: F): boolean => {
      form.setDraft(values);
      const found = check(values);
      form.setErrors(found);
      if (Object.keys(found).length > 0) return false;
      setApplied({ ...values });
      return true;
    },
    reset: () => {
      form.setDraft(empty);
      form.setErrors({});
      setApplied(empty);
    },
  };
}

/**
 * A card of filter fields (the requests, the audit log): the form's own error above them,
 * then its two buttons, one that applies the fields and one that starts over.
 */
export function FilterForm(p: {
  label: string;
  formRef: { current: HTMLFormElement | null };
  errors: Errors;
  apply: string;
  onApply: () => void;
  reset: string;
  onReset: () => void;
  children: Child;
}) {
  return (
    <form
      ref={p.formRef}
      class="card filters"
      onSubmit={(e: Event) => {
        e.preventDefault();
        p.onApply();
      }}
      noValidate
      aria-label={p.label}
    >
      <FormError errors={p.errors} />
      <div class="row">{p.children}</div>
      <div class="actions">
        <button type="submit" class="primary">
          {p.apply}
        </button>
        <button type="button" onClick={p.onReset}>
          {p.reset}
        </button>
      </div>
    </form>
  );
}

/**
 * Pages read by cursor (the tenants, the requests): the cursors of the pages before this
 * one and this one's. `cursor` is this page's; `restart()` goes back to the first page;
 * `pager(next, back, forth)` is the pair of buttons, `next` being the answer's cursor
 * (null: the last page).
 */
export function useCursorPages() {
  const [trail, setTrail] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: trail[trail.length - 1],
    /** 1 for the first page. */
    number: trail.length,
    restart: () => setTrail([undefined]),
    pager: (next: string | null | undefined, back: string, forth: string) => (
      <Pager
        back={back}
        forth={forth}
        onBack={trail.length > 1 ? () => setTrail(trail.slice(0, -1)) : null}
        onForth={next ? () => setTrail([...trail, next]) : null}
      />
    ),
  };
}

/** Back and forth through pages: a button is disabled where its handler is null. */
export function Pager(p: {
  back: string;
  forth: string;
  onBack: (() => void) | null;
  onForth: (() => void) | null;
}) {
  return (
    <div class="pager">
      <button type="button" disabled={!p.onBack} onClick={() => p.onBack?.()}>
        {p.back}
      </button>
      <button type="button" disabled={!p.onForth} onClick={() => p.onForth?.()}>
        {p.forth}
      </button>
    </div>
  );
}

export function FormError({ errors }: { errors: Errors }) {
  return errors._form ? (
    <p class="form-error" role="alert" tabindex={-1}>
      {errors._form}
    </p>
  ) : null;
}

/** Why a page could not load or act, announced (role=alert); nothing while all is well. */
export function PageError({ error }: { error: string | null }) {
  return error ? (
    <p class="form-error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A select's options as [label, value] pairs, the current value selected. */
export function Options<V extends string | number>(p: {
  choices: readonly (readonly [string, V])[];
  current: V;
}) {
  return (
    <>
      {p.choices.map(([label, value]) => (
        <option value={value} selected={value === p.current}>
          {label}
        </option>
      ))}
    </>
  );
}

/** A message the page announces (role=status), e.g. "Saved". */
export function Notice({ text }: { text: string }) {
  return (
    <p class="notice" role="status">
      {text}
    </p>
  );
}

/**
 * A secret the API showed once (a token, a webhook secret). It lives in this
 * component's state only: "Done" drops it, and nothing else keeps it.
 */
export function SecretOnce(props: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  const codeRef = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: select it for the operator to copy.
      const range = document.createRange();
      if (codeRef.current) range.selectNodeContents(codeRef.current);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <section class="secret" aria-labelledby="secret-title">
      <h3 id="secret-title">{props.label}</h3>
      <p>It is shown once, now. Copy it and keep it safe: the gateway cannot show it again.</p>
      <code class="secret-value" ref={codeRef} data-secret="">
        {props.secret}
      </code>
      <div class="actions">
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="primary" onClick={props.onDone}>
          Done, hide it
        </button>
      </div>
      <p role="status" class="hint">
        {copied}
      </p>
    </section>
  );
}

/**
 * A button that asks first, in a modal dialog (focus moves into it, Escape
 * cancels). With `typeToConfirm`, the operator types that text to go on.
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  message: Child;
  confirmLabel: string;
  danger?: boolean;
  typeToConfirm?: string;
  onConfirm: () => Promise<void>;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const close = () => {
    setOpen(false);
    setTyped('');
    setError('');
  };
  const dialog = useModal(open, close);
  const go = async (e: Event) => {
    e.preventDefault();
    if (props.typeToConfirm && typed !== props.typeToConfirm) {
      setError(`Type ${props.typeToConfirm} to confirm`);
      return;
    }
    setBusy(true);
    try {
      await props.onConfirm();
      close();
    } catch (err) {
      setError(refusal(err, [])._form ?? 'Failed');
    } finally {
      setBusy(false);
    }
  };
  const titleId = `confirm-${props.label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <>
      <button type="button" class={props.danger ? 'danger' : ''} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      <dialog ref={dialog.ref} aria-labelledby={titleId} onClose={dialog.onClose}>
        <form method="dialog" onSubmit={go}>
          <h2 id={titleId}>{props.title}</h2>
          <div>{props.message}</div>
          {props.typeToConfirm ? (
            <Field
              id={`${titleId}-typed`}
              name="confirm"
              label={`Type ${props.typeToConfirm} to confirm`}
              value={typed}
              onValue={setTyped}
            />
          ) : null}
          {error ? (
            <p class="error" role="alert">
              {error}
            </p>
          ) : null}
          <div class="actions">
            <button type="button" onClick={close}>
              Cancel
            </button>
            <button type="submit" class={props.danger ? 'danger' : 'primary'} disabled={busy}>
              {props.confirmLabel}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

export { fmtTime } from '../lib/format';
