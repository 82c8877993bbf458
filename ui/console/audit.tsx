/** The audit log, newest first: filter by tenant, operator, action and time. */
import { useEffect, useRef, useState } from 'hono/jsx/dom';
import type { AuditPage as Page } from '../../src/types/wire';
import { api } from './api';
import {
  bindFields,
  type Errors,
  Field,
  FilterForm,
  fmtTime,
  focusFirstError,
  refusal,
} from './form';

interface Filter {
  tenant_id: string;
  actor: string;
  action: string;
  since: string;
  until: string;
}

const EMPTY: Filter = { tenant_id: '', actor: '', action: '', since: '', until: '' };
const FIELDS = ['tenant_id', 'actor', 'action', 'since', 'until'] as const;
/** `datetime-local` is the browser's own time zone: the API gets it as a UTC instant. */
const instant = (local: string) => (local ? new Date(local).toISOString() : '');

function validate(f: Filter): Errors {
  const e: Errors = {};
  if (f.tenant_id && !/^ten_[0-9A-Za-z]{16}$/.test(f.tenant_id.trim()))
    e.tenant_id = 'A tenant id: ten_ and 16 letters or digits';
  if (f.action && !/^[a-z_]+(\.[a-z_]+)*\.?$/.test(f.action.trim())) {
    e.action = 'An action (token.revoked) or a prefix ending in a dot (token.)';
  }
  if (f.since && f.until && Date.parse(f.since) > Date.parse(f.until))
    e.until = 'Until must not be before since';
  return e;
}

export function AuditPage(props: { tenant?: string | undefined }) {
  const first = { ...EMPTY, tenant_id: props.tenant ?? '' };
  const [draft, setDraft] = useState<Filter>(first);
  const [filter, setFilter] = useState<Filter>(first);
  const [pageNum, setPageNum] = useState(1);
  const [page, setPage] = useState<Page | null>(null);
  const [errors, setErrors] = useState<Errors>({});
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    api
      .audit({
        page_num: String(pageNum),
        page_size: '50',
        tenant_id: filter.tenant_id.trim(),
        actor: filter.actor.trim(),
        action: filter.action.trim(),
        since: instant(filter.since),
        until: instant(filter.until),
      })
      .then((p) => {
        setPage(p);
        setErrors({});
      })
      .catch((err: unknown) => {
        const found = refusal(err, FIELDS);
        setErrors(found);
        focusFirstError(form.current, found);
      });
  }, [filter, pageNum]);

  const field = bindFields(draft, setDraft, errors);
  const submit = () => {
    const found = validate(draft);
    setErrors(found);
    if (Object.keys(found).length > 0) return focusFirstError(form.current, found);
    setPageNum(1);
    setFilter({ ...draft });
  };

  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <FilterForm
        label="Filter the audit log"
        formRef={form}
        errors={errors}
        apply="Filter"
        onApply={submit}
        reset="Clear"
        onReset={() => {
          setDraft(EMPTY);
          setFilter(EMPTY);
          setPageNum(1);
        }}
      >
        <Field id="audit-tenant" label="Tenant id" {...field('tenant_id')} />
        <Field id="audit-actor" label="Operator (email or admin-token)" {...field('actor')} />
        <Field
          id="audit-action"
          label="Action or prefix"
          placeholder="token."
          {...field('action')}
        />
        <Field id="audit-since" label="Since" type="datetime-local" {...field('since')} />
        <Field id="audit-until" label="Until" type="datetime-local" {...field('until')} />
      </FilterForm>
      {page ? (
        <>
          <table class="grid">
            <caption>
              {page.total} entr{page.total === 1 ? 'y' : 'ies'}; page {page.page_num} of{' '}
              {Math.max(1, page.total_page)}
            </caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Operator</th>
                <th scope="col">Action</th>
                <th scope="col">Tenant</th>
                <th scope="col">Token</th>
                <th scope="col">From</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody data-testid="audit-rows">
              {page.data.map((e) => (
                <tr key={e.id}>
                  <td>{fmtTime(e.at)}</td>
                  <td>{e.actor}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{e.tenant_id ? <code>{e.tenant_id}</code> : '—'}</td>
                  <td>{e.token_id ? <code>{e.token_id}</code> : '—'}</td>
                  <td>{[e.ip, e.colo].filter(Boolean).join(' · ') || '—'}</td>
                  <td class="detail">
                    <code>{JSON.stringify(e.detail)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="pager">
            <button type="button" disabled={pageNum <= 1} onClick={() => setPageNum(pageNum - 1)}>
              Previous page
            </button>
            <button
              type="button"
              disabled={pageNum >= page.total_page}
              onClick={() => setPageNum(pageNum + 1)}
            >
              Next page
            </button>
          </div>
        </>
      ) : (
        <p class="loading">Loading…</p>
      )}
    </section>
  );
}
