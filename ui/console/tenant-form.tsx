/**
 * The fields a tenant is made and changed with, shared by Create (tenants.tsx) and
 * Settings (edit-tenant.tsx): its name, its platform key (typed once, checked with the
 * platform on demand) and its browser origins, with the browser's own checks (the API's
 * bounds, tenant-rules.ts). Field names are the API's, so its refusal lands by the field.
 */
import { useState } from 'hono/jsx/dom';
import type { KeyCheck } from '../../src/types/wire';
import { type Errors, Field, useDraft, useFormErrors } from './form';
import { KeyCheckNote } from './key-check';
import {
  originsProblem,
  parseOrigins,
  platformKeyProblem,
  tenantNameProblem,
} from './tenant-rules';

export interface TenantDraft {
  name: string;
  platform_key: string;
  /** One origin a line (or separated by commas or spaces). */
  cors_origins: string;
}

export const TENANT_FIELDS = ['name', 'platform_key', 'cors_origins'] as const;

/** The browser's check of a draft; an empty key is a problem only where one is required. */
export function tenantProblems(d: TenantDraft, keyRequired: boolean): Errors {
  const e: Errors = {};
  const name = tenantNameProblem(d.name);
  if (name) e.name = name;
  const key = d.platform_key || keyRequired ? platformKeyProblem(d.platform_key) : null;
  if (key) e.platform_key = key;
  const origins = originsProblem(parseOrigins(d.cors_origins));
  if (origins) e.cors_origins = origins;
  return e;
}

/**
 * The last check of a key and which key it was of (compared, never shown; null: the
 * tenant's stored key). `of(key)` is the result when it is of that key.
 */
export function useKeyCheck() {
  const [checked, setChecked] = useState<{ key: string | null; result: KeyCheck } | null>(null);
  return {
    of: (key: string | null) => (checked && checked.key === key ? checked.result : null),
    set: (key: string | null, result: KeyCheck) => setChecked({ key, result }),
    clear: () => setChecked(null),
  };
}

/**
 * A tenant form's state, the same for Create and Settings: the draft and its errors
 * (useDraft), the key check, and the form element. `invalid(keyRequired)` checks the
 * draft and, when it cannot be sent, shows why and focuses the first field at fault
 * (useFormErrors); `showRefusal(err, fields)` does the same with the API's refusal.
 */
export function useTenantForm(initial: TenantDraft) {
  const state = useDraft<TenantDraft>(initial);
  const keyCheck = useKeyCheck();
  const { form, showErrors, showRefusal } = useFormErrors(state.setErrors);
  return {
    ...state,
    keyCheck,
    form,
    key: state.draft.platform_key,
    invalid: (keyRequired: boolean) => showErrors(tenantProblems(state.draft, keyRequired)),
    showRefusal,
  };
}

type Bound = (name: keyof TenantDraft & string) => {
  name: string;
  value: string;
  onValue: (v: string) => void;
  error: string | undefined;
};

/**
 * Name, platform key with its check button and what the check found, and browser
 * origins. `id` prefixes the fields' ids (`new`, `edit`).
 */
export function TenantFields(p: {
  id: string;
  field: Bound;
  keyLabel: string;
  keyHint: string;
  keyRequired: boolean;
  originsLabel: string;
  checkLabel: string;
  onCheck: () => void;
  busy?: boolean;
  /** What the platform said of the key now typed (or stored), if it was checked. */
  checked: KeyCheck | null;
}) {
  return (
    <>
      <Field id={`${p.id}-name`} label="Name" {...p.field('name')} required />
      <Field
        id={`${p.id}-key`}
        label={p.keyLabel}
        type="password"
        autocomplete="new-password"
        {...p.field('platform_key')}
        hint={p.keyHint}
        required={p.keyRequired}
      />
      <div class="actions">
        <button type="button" disabled={p.busy} onClick={p.onCheck}>
          {p.checkLabel}
        </button>
      </div>
      {p.checked ? <KeyCheckNote id={`${p.id}-key-check`} result={p.checked} /> : null}
      <Field
        id={`${p.id}-origins`}
        label={p.originsLabel}
        {...p.field('cors_origins')}
        hint="One per line, e.g. https://app.example.com"
        multiline
      />
    </>
  );
}
