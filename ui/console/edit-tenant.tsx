/**
 * A tenant's settings: name, browser origins and a new platform key (typed
 * once, cleared when saved; the fingerprint shows which key is in use).
 */
import { useRef, useState } from 'hono/jsx/dom';
import type { KeyCheck, PublicTenant } from '../../src/types/wire';
import { api } from './api';
import { type Errors, Field, FormError, focusFirstError, Notice, refusal } from './form';
import { KeyCheckNote } from './key-check';
import {
  originsProblem,
  parseOrigins,
  platformKeyProblem,
  tenantNameProblem,
} from './tenant-rules';

export function EditTenant(props: {
  tenant: PublicTenant;
  canChange: boolean;
  saved: (t: PublicTenant) => void;
}) {
  const [name, setName] = useState(props.tenant.name);
  const [origins, setOrigins] = useState(props.tenant.cors_origins.join('\n'));
  const [key, setKey] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const [notice, setNotice] = useState('');
  // A check of the typed key (compared, never shown), or of the stored one (`key` null).
  const [checked, setChecked] = useState<{ key: string | null; result: KeyCheck } | null>(null);
  const form = useRef<HTMLFormElement>(null);

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
    const list = parseOrigins(origins);
    const found: Errors = {};
    const nameProblem = tenantNameProblem(name);
    if (nameProblem) found.name = nameProblem;
    const keyProblem = key ? platformKeyProblem(key) : null;
    if (keyProblem) found.platform_key = keyProblem;
    const originProblem = originsProblem(list);
    if (originProblem) found.cors_origins = originProblem;
    setErrors(found);
    if (Object.keys(found).length > 0) return focusFirstError(form.current, found);
    try {
      const updated = await api.updateTenant(props.tenant.id, {
        name: name.trim(),
        cors_origins: list,
        ...(key ? { platform_key: key } : {}),
      });
      setKey('');
      setNotice(key ? 'Saved, with the new platform key.' : 'Saved.');
      props.saved(updated);
    } catch (err) {
      const found = refusal(err, ['name', 'platform_key', 'cors_origins']);
      setErrors(found);
      focusFirstError(form.current, found);
    }
  };

  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <FormError errors={errors} />
      {notice ? <Notice text={notice} /> : null}
      <Field
        id="edit-name"
        name="name"
        label="Name"
        value={name}
        onValue={setName}
        error={errors.name}
        required
      />
      <Field
        id="edit-origins"
        name="cors_origins"
        label="Browser origins"
        value={origins}
        onValue={setOrigins}
        error={errors.cors_origins}
        hint="One per line, e.g. https://app.example.com"
        multiline
      />
      <Field
        id="edit-key"
        name="platform_key"
        label="New platform key (leave empty to keep the current one)"
        type="password"
        autocomplete="new-password"
        value={key}
        onValue={setKey}
        error={errors.platform_key}
        hint="Typed once and never shown again; the fingerprint above changes to the new key's."
      />
      <div class="actions">
        <button
          type="button"
          onClick={async () => {
            const problem = key ? platformKeyProblem(key) : null;
            if (problem) {
              setErrors({ platform_key: problem });
              return;
            }
            try {
              const result = key
                ? await api.checkKey(key)
                : await api.checkTenantKey(props.tenant.id);
              setChecked({ key: key || null, result });
            } catch (err) {
              setErrors(refusal(err, ['platform_key']));
            }
          }}
        >
          {key ? 'Check the new key' : 'Check the current key'}
        </button>
      </div>
      {checked && checked.key === (key || null) ? (
        <KeyCheckNote id="edit-key-check" result={checked.result} />
      ) : null}
      <div class="actions">
        <button type="submit" class="primary">
          Save settings
        </button>
      </div>
    </form>
  );
}
