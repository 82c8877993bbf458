/**
 * Tenants: search (server-side, GET /admin/tenants?q=) and paging by cursor,
 * so the page stays as quick at 1,000 tenants as at ten; and, for an admin,
 * creating one (the platform key is typed once and never shown again).
 */
import { useEffect, useRef, useState } from 'hono/jsx/dom';
import type { ListedTenant } from '../../src/types/wire';
import { api } from './api';
import { type Errors, Field, FormError, focusFirstError, refusal, SecretOnce } from './form';
import {
  originsProblem,
  parseOrigins,
  platformKeyProblem,
  tenantNameProblem,
} from './tenant-rules';

const PAGE_SIZE = 50;

export function TenantsPage(props: { canChange: boolean; open: (id: string) => void }) {
  const [q, setQ] = useState('');
  const [query, setQuery] = useState('');
  // Cursors of the pages before this one, and this one's.
  const [trail, setTrail] = useState<(string | undefined)[]>([undefined]);
  const [rows, setRows] = useState<ListedTenant[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [reload, setReload] = useState(0);
  const cursor = trail[trail.length - 1];

  // Typing settles for a moment before a search goes out; a new search starts at page 1.
  useEffect(() => {
    const next = q.trim();
    if (next === query) return;
    const timer = setTimeout(() => {
      setQuery(next);
      setTrail([undefined]);
    }, 250);
    return () => clearTimeout(timer);
  }, [q, query]);

  useEffect(() => {
    let live = true;
    setError('');
    api
      .tenants({ page_size: PAGE_SIZE, q: query || undefined, cursor })
      .then((page) => {
        if (!live) return;
        setRows(page.tenants);
        setNext(page.cursor);
      })
      .catch((err: unknown) => live && setError(refusal(err, [])._form ?? 'Failed'));
    return () => {
      live = false;
    };
  }, [query, cursor, reload]);

  return (
    <section aria-labelledby="tenants-title">
      <h1 id="tenants-title">Tenants</h1>
      <search class="toolbar">
        <label for="tenant-search">Search by name or id</label>
        <input
          id="tenant-search"
          type="search"
          value={q}
          autocomplete="off"
          onInput={(e: Event) => setQ((e.target as HTMLInputElement).value)}
        />
      </search>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {rows === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <table class="grid" aria-describedby="tenants-count">
          <caption id="tenants-count">
            {rows.length === 0
              ? 'No tenant on this page.'
              : `${rows.length} tenant${rows.length === 1 ? '' : 's'} on page ${trail.length}`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Status</th>
              <th scope="col">Key fingerprint</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody data-testid="tenant-rows">
            {rows.map((t) => (
              <tr key={t.id}>
                <td>
                  <button type="button" class="link" onClick={() => props.open(t.id)}>
                    {t.name}
                  </button>
                </td>
                <td>
                  <code>{t.id}</code>
                </td>
                <td>
                  <span class={`status status-${t.status}`}>{t.status}</span>
                </td>
                <td>
                  <code title="First 16 hex digits of the platform key's SHA-256">
                    {t.key_fingerprint ?? '—'}
                  </code>
                </td>
                <td>{t.created_at.slice(0, 10)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        <button
          type="button"
          disabled={trail.length <= 1}
          onClick={() => setTrail(trail.slice(0, -1))}
        >
          Previous page
        </button>
        <button type="button" disabled={!next} onClick={() => next && setTrail([...trail, next])}>
          Next page
        </button>
      </div>
      {props.canChange ? (
        <CreateTenant
          created={(id) => {
            setReload(reload + 1);
            props.open(id);
          }}
        />
      ) : null}
    </section>
  );
}

const FIELDS = ['name', 'platform_key', 'cors_origins', 'token'] as const;

function validate(v: { name: string; key: string; origins: string[] }): Errors {
  const e: Errors = {};
  const name = tenantNameProblem(v.name);
  if (name) e.name = name;
  const key = platformKeyProblem(v.key);
  if (key) e.platform_key = key;
  const origins = originsProblem(v.origins);
  if (origins) e.cors_origins = origins;
  return e;
}

function CreateTenant(props: { created: (id: string) => void }) {
  const [name, setName] = useState('');
  const [key, setKey] = useState('');
  const [origins, setOrigins] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<{ id: string; token: string } | null>(null);
  const form = useRef<HTMLFormElement>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    const list = parseOrigins(origins);
    const found = validate({ name, key, origins: list });
    setErrors(found);
    if (Object.keys(found).length > 0) return focusFirstError(form.current, found);
    setBusy(true);
    try {
      const answer = await api.createTenant({
        name: name.trim(),
        platform_key: key,
        cors_origins: list,
        token: { name: 'default', scopes: ['full'] },
      });
      // The key leaves the page's state at once; only its fingerprint is ever shown.
      setKey('');
      setName('');
      setOrigins('');
      setMade({ id: answer.tenant_id, token: answer.token });
    } catch (err) {
      const found = refusal(err, FIELDS);
      setErrors(found);
      focusFirstError(form.current, found);
    } finally {
      setBusy(false);
    }
  };

  if (made) {
    return (
      <SecretOnce
        label="The new tenant's first token (scopes: full)"
        secret={made.token}
        onDone={() => {
          const id = made.id;
          setMade(null);
          props.created(id);
        }}
      />
    );
  }
  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby="create-title">
      <h2 id="create-title">Create a tenant</h2>
      <FormError errors={errors} />
      <Field
        id="new-name"
        name="name"
        label="Name"
        value={name}
        onValue={setName}
        error={errors.name}
        required
      />
      <Field
        id="new-key"
        name="platform_key"
        label="Platform key"
        type="password"
        autocomplete="new-password"
        value={key}
        onValue={setKey}
        error={errors.platform_key}
        hint="Typed once: the gateway stores it sealed and never shows it again, only its fingerprint."
        required
      />
      <Field
        id="new-origins"
        name="cors_origins"
        label="Browser origins (optional)"
        value={origins}
        onValue={setOrigins}
        error={errors.cors_origins}
        hint="One per line, e.g. https://app.example.com"
        multiline
      />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Create tenant
        </button>
      </div>
    </form>
  );
}
