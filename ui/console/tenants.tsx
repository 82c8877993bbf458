/**
 * Tenants: search (server-side, GET /admin/tenants?q=) and paging by cursor,
 * so the page stays as quick at 1,000 tenants as at ten; and, for an admin,
 * creating one (the platform key is typed once and never shown again).
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { KeyCheck, ListedTenant, Plan } from '../../src/types/wire';
import { ApiError } from '../lib/api';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import { FormError, focusFirstError, PageError, refusal, SecretOnce, useCursorPages } from './form';
import { TENANT_FIELDS, type TenantDraft, TenantFields, useTenantForm } from './tenant-form';
import { parseOrigins, platformKeyProblem } from './tenant-rules';

const PAGE_SIZE = 50;

export function TenantsPage(props: { canChange: boolean; open: (id: string) => void }) {
  const [q, setQ] = useState('');
  const [query, setQuery] = useState('');
  const pages = useCursorPages();
  const [rows, setRows] = useState<ListedTenant[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [reload, setReload] = useState(0);

  // Typing settles for a moment before a search goes out; a new search starts at page 1.
  useEffect(() => {
    const next = q.trim();
    if (next === query) return;
    const timer = setTimeout(() => {
      setQuery(next);
      pages.restart();
    }, 250);
    return () => clearTimeout(timer);
  }, [q, query]);

  useEffect(() => {
    let live = true;
    setError('');
    api
      .tenants({ page_size: PAGE_SIZE, q: query || undefined, cursor: pages.cursor })
      .then((page) => {
        if (!live) return;
        setRows(page.tenants);
        setNext(page.cursor);
      })
      .catch((err: unknown) => live && setError(refusal(err, [])._form ?? 'Failed'));
    return () => {
      live = false;
    };
  }, [query, pages.cursor, reload]);

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
      <PageError error={error} />
      {rows === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <table class="grid" aria-describedby="tenants-count">
          <caption id="tenants-count">
            {rows.length === 0
              ? 'No tenant on this page.'
              : `${rows.length} tenant${rows.length === 1 ? '' : 's'} on page ${pages.number}`}
          </caption>
          <ColumnHeads names={['Name', 'Id', 'Status', 'Plan', 'Key fingerprint', 'Created']} />
          <tbody data-testid="tenant-rows">
            {rows.map((t) => (
              <tr key={t.id}>
                <td>
                  <button type="button" class="link" onClick={() => props.open(t.id)}>
                    {t.name}
                  </button>
                </td>
                <td>
                  <code class="id">{t.id}</code>
                </td>
                <td>
                  <span class={`status status-${t.status}`}>{t.status}</span>
                </td>
                <td>{t.plan ?? '—'}</td>
                <td>
                  <code class="id" title="First 16 hex digits of the platform key's SHA-256">
                    {t.key_fingerprint ?? '—'}
                  </code>
                </td>
                <td>{t.created_at.slice(0, 10)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pages.pager(next, 'Previous page', 'Next page')}
      {props.canChange ? (
        <CreateTenant
          created={async (id) => {
            // Listed at once, at the top (KV's list may take a while to show it).
            const made = await api.tenant(id).catch(() => null);
            if (!made) return setReload(reload + 1);
            const { cors_origins: _origins, ...listed } = made;
            setRows((old) => [listed, ...(old ?? []).filter((r) => r.id !== id)]);
          }}
          done={props.open}
          open={props.open}
        />
      ) : null}
    </section>
  );
}

const FIELDS = [...TENANT_FIELDS, 'token', 'plan'] as const;
const EMPTY: TenantDraft = { name: '', platform_key: '', cors_origins: '' };

/**
 * A new tenant. The platform key is checked with the platform first (one cheap
 * read): a key it refuses, or a check that cannot be made, asks for a second,
 * deliberate "Create anyway". A tenant with the same name and key exists already:
 * the form says which, and offers to open it. Once made, its first token is shown
 * once, named with the tenant, and `created` puts it in the list.
 */
function CreateTenant(props: {
  created: (id: string) => void;
  done: (id: string) => void;
  open: (id: string) => void;
}) {
  const { draft, setDraft, errors, setErrors, field, keyCheck, form, key, invalid, showRefusal } =
    useTenantForm(EMPTY);
  const [plan, setPlan] = useState('');
  const [plans, setPlans] = useState<Plan[]>([]);
  const [busy, setBusy] = useState(false);
  const [twin, setTwin] = useState<string | null>(null);
  const [made, setMade] = useState<{ id: string; name: string; token: string } | null>(null);

  useEffect(() => {
    api.plans().then(
      (r) => setPlans(r.plans),
      () => setPlans([]),
    );
  }, []);

  const check = async (): Promise<KeyCheck | null> => {
    const problem = platformKeyProblem(key);
    if (problem) {
      setErrors({ platform_key: problem });
      focusFirstError(form.current, { platform_key: problem });
      return null;
    }
    const result = await api.checkKey(key);
    keyCheck.set(key, result);
    return result;
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setTwin(null);
    if (invalid(true)) return;
    setBusy(true);
    try {
      // Not checked yet (or another key since): check first, and stop when it is not valid.
      if (!keyCheck.of(key)) {
        const result = await check();
        if (result?.result !== 'valid') return;
      }
      const name = draft.name.trim();
      const answer = await api.createTenant({
        name,
        platform_key: key,
        cors_origins: parseOrigins(draft.cors_origins),
        token: { name: 'default', scopes: ['full'] },
        ...(plan ? { plan } : {}),
      });
      // The key leaves the page's state at once; only its fingerprint is ever shown.
      setDraft(EMPTY);
      keyCheck.clear();
      setMade({ id: answer.tenant_id, name, token: answer.token });
      props.created(answer.tenant_id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        const id = /ten_[0-9A-Za-z]{16}/.exec(err.message)?.[0] ?? null;
        setTwin(id);
      }
      showRefusal(err, FIELDS);
    } finally {
      setBusy(false);
    }
  };

  if (made) {
    return (
      <SecretOnce
        label={`The first token of ${made.name} (${made.id}, scopes: full)`}
        secret={made.token}
        onDone={() => {
          const id = made.id;
          setMade(null);
          props.done(id);
        }}
      />
    );
  }
  const checked = keyCheck.of(key);
  const refused = checked !== null && checked.result !== 'valid';
  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby="create-title">
      <h2 id="create-title">Create a tenant</h2>
      <FormError errors={errors} />
      {twin ? (
        <p>
          <button type="button" class="link" onClick={() => props.open(twin)}>
            Open the existing tenant {twin}
          </button>
        </p>
      ) : null}
      <TenantFields
        id="new"
        field={field}
        keyLabel="Platform key"
        keyHint="Typed once: the gateway stores it sealed and never shows it again, only its fingerprint."
        keyRequired
        originsLabel="Browser origins (optional)"
        checkLabel="Check key"
        busy={busy}
        checked={checked}
        onCheck={async () => {
          setBusy(true);
          try {
            await check();
          } catch (err) {
            setErrors(refusal(err, FIELDS));
          } finally {
            setBusy(false);
          }
        }}
      />
      {plans.length > 0 ? (
        <div class="field">
          <label for="new-plan">Plan (optional)</label>
          <select
            id="new-plan"
            name="plan"
            onChange={(e: Event) => setPlan((e.target as HTMLSelectElement).value)}
          >
            <option value="" selected={plan === ''}>
              no plan (the default limits)
            </option>
            {plans.map((p) => (
              <option value={p.name} selected={plan === p.name}>
                {p.name}
              </option>
            ))}
          </select>
          {errors.plan ? <p class="error">{errors.plan}</p> : null}
        </div>
      ) : null}
      <div class="actions">
        <button type="submit" class={refused ? 'danger' : 'primary'} disabled={busy}>
          {refused ? 'Create anyway' : 'Create tenant'}
        </button>
      </div>
    </form>
  );
}
