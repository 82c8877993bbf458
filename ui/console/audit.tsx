/** The audit log, newest first: filter by tenant, operator, action and time. */
import { useEffect, useState } from 'hono/jsx/dom';
import type { AuditPage as Page } from '../../src/types/wire';
import { localToIso } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import {
  type Errors,
  Field,
  FilterForm,
  fmtTime,
  focusFirstError,
  Pager,
  refusal,
  useFilters,
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
  const filters = useFilters<Filter>(EMPTY, validate, { ...EMPTY, tenant_id: props.tenant ?? '' });
  const { applied: filter, field } = filters;
  const [pageNum, setPageNum] = useState(1);
  const [page, setPage] = useState<Page | null>(null);

  useEffect(() => {
    api
      .audit({
        page_num: String(pageNum),
        page_size: '50',
        tenant_id: filter.tenant_id.trim(),
        actor: filter.actor.trim(),
        action: filter.action.trim(),
        since: localToIso(filter.since),
        until: localToIso(filter.until),
      })
      .then((p) => {
        setPage(p);
        filters.setErrors({});
      })
      .catch((err: unknown) => {
        const found = refusal(err, FIELDS);
        filters.setErrors(found);
        focusFirstError(filters.formRef.current, found);
      });
  }, [filter, pageNum]);

  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <FilterForm
        label="Filter the audit log"
        formRef={filters.formRef}
        errors={filters.errors}
        apply="Filter"
        onApply={() => filters.apply() && setPageNum(1)}
        reset="Clear"
        onReset={() => {
          filters.reset();
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
            <ColumnHeads
              names={['When', 'Operator', 'Action', 'Tenant', 'Token', 'From', 'Detail']}
            />
            <tbody data-testid="audit-rows">
              {page.data.map((e) => (
                <tr key={e.id}>
                  <td>{fmtTime(e.at)}</td>
                  <td>{e.actor}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{e.tenant_id ? <code class="id">{e.tenant_id}</code> : '—'}</td>
                  <td>{e.token_id ? <code class="id">{e.token_id}</code> : '—'}</td>
                  <td>{[e.ip, e.colo].filter(Boolean).join(' · ') || '—'}</td>
                  <td class="detail">
                    <code>{JSON.stringify(e.detail)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager
            back="Previous page"
            forth="Next page"
            onBack={pageNum > 1 ? () => setPageNum(pageNum - 1) : null}
            onForth={pageNum < page.total_page ? () => setPageNum(pageNum + 1) : null}
          />
        </>
      ) : (
        <p class="loading">Loading…</p>
      )}
    </section>
  );
}
