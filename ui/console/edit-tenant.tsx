/**
 * A tenant's settings: name, browser origins and a new platform key (typed
 * once, cleared when saved; the fingerprint shows which key is in use). The
 * fields are the create form's (tenant-form.tsx).
 */
import { useState } from 'hono/jsx/dom';
import type { KeyCheck, PublicTenant } from '../../src/types/wire';
import { api } from './api';
import { FormError, Notice, refusal } from './form';
import { TENANT_FIELDS, TenantFields, useTenantForm } from './tenant-form';
import { parseOrigins, platformKeyProblem } from './tenant-rules';

export function EditTenant(props: {
  tenant: PublicTenant;
  canChange: boolean;
  /** The tenant as saved, and what the platform said of a new key saved with it. */
  saved: (t: PublicTenant, keyCheck: KeyCheck | null) => void;
  /** What the platform said of the current key when checked here. */
  checkedCurrent: (result: KeyCheck) => void;
}) {
  const { draft, setDraft, errors, setErrors, field, keyCheck, form, key, invalid, showRefusal } =
    useTenantForm({
      name: props.tenant.name,
      platform_key: '',
      cors_origins: props.tenant.cors_origins.join('\n'),
    });
  const [notice, setNotice] = useState('');

  if (!props.canChange) {
    return (
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <p>
          Name, browser origins and the platform key (by its fingerprint) are shown above. An admin
          can change them.
        </p>
      </section>
    );
  }

  const submit = async (e: Event) => {
    e.preventDefault();
    setNotice('');
    if (invalid(false)) return;
    try {
      const updated = await api.updateTenant(props.tenant.id, {
        name: draft.name.trim(),
        cors_origins: parseOrigins(draft.cors_origins),
        ...(key ? { platform_key: key } : {}),
      });
      // A new key is checked once it is the tenant's: the page says whether it works.
      const check = key ? await api.checkTenantKey(props.tenant.id).catch(() => null) : null;
      setDraft({ ...draft, platform_key: '' });
      keyCheck.clear();
      if (check) keyCheck.set(null, check);
      setNotice(key ? 'Saved, with the new platform key.' : 'Saved.');
      props.saved(updated, check);
    } catch (err) {
      showRefusal(err, TENANT_FIELDS);
    }
  };

  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <FormError errors={errors} />
      {notice ? <Notice text={notice} /> : null}
      <TenantFields
        id="edit"
        field={field}
        keyLabel="New platform key (leave empty to keep the current one)"
        keyHint="Typed once and never shown again; the fingerprint above changes to the new key's."
        keyRequired={false}
        originsLabel="Browser origins"
        checkLabel={key ? 'Check the new key' : 'Check the current key'}
        checked={keyCheck.of(key || null)}
        onCheck={async () => {
          const problem = key ? platformKeyProblem(key) : null;
          if (problem) {
            setErrors({ platform_key: problem });
            return;
          }
          try {
            const result = key
              ? await api.checkKey(key)
              : await api.checkTenantKey(props.tenant.id);
            keyCheck.set(key || null, result);
            if (!key) props.checkedCurrent(result);
          } catch (err) {
            setErrors(refusal(err, ['platform_key']));
          }
        }}
      />
      <div class="actions">
        <button type="submit" class="primary">
          Save settings
        </button>
      </div>
    </form>
  );
}
