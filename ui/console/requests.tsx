/**
 * A tenant's request explorer (GET /admin/tenants/{id}/requests): its requests over any
 * time range within what its guard keeps (7 days), filtered by request id, token, status
 * and operation, newest first, 50 at a time; beside them, what the usage history counts
 * in the same hours (every request, for 90 days), so a range past what is kept, or a
 * sampled flood, still says how many there were. The request id an error envelope hands
 * a partner finds its request here, with its token, operation, status and code, the
 * limiter's decision, the cache, the platform's attempts and answer, the latency and the
 * trace id.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { Analytics, RecentRequestPage, TokenListing } from '../../src/types/wire';
import { count, localToIso, msToLocal, plural } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import { type Errors, Field, FilterForm, refusal, useCursorPages, useFilters } from './form';

interface Filter {
  request_id: string;
  token_id: string;
  status: string;
  operation: string;
  /** `datetime-local` values, in the browser's time zone; empty: all that is kept. */
  from: string;
  to: string;
}

const EMPTY: Filter = {
  request_id: '',
  token_id: '',
  status: '',
  operation: '',
  from: '',
  to: '',
};
const FIELDS = ['request_id', 'token_id', 'status', 'operation', 'from', 'to'] as const;
const STATUSES = ['4xx', '5xx', '2xx', '429', '401', '403', '404', '502'];
const HOUR_MS = 3_600_000;
/** Ranges a click away: the last hour, day and week (what is kept). */
const PRESETS: [string, number][] = [
  ['Last hour', HOUR_MS],
  ['Last 24 h', 24 * HOUR_MS],
  ['Last 7 days', 7 * 24 * HOUR_MS],
];

function check(f: Filter): Errors {
  const e: Errors = {};
  if (f.request_id && !/^[\x21-\x7E]{1,200}$/.test(f.request_id.trim())) {
    e.request_id = 'A request id: printable characters without spaces';
  }
  if (f.status && !/^([1-5]xx|[1-5]\d\d)$/.test(f.status.trim())) {
    e.status = 'An HTTP status (429) or a class (4xx)';
  }
  if (f.operation && !/^[A-Za-z0-9_.:-]{1,64}$/.test(f.operation.trim())) {
    e.operation = 'An operation id, e.g. team.list';
  }
  if (f.from && f.to && Date.parse(f.from) > Date.parse(f.to)) {
    e.to = 'To must not be before from';
  }
  return e;
}

/** Month, day and time to the millisecond (the range spans days): the year is in its title. */
const time = (iso: string) => `${iso.slice(5, 10)} ${iso.slice(11, 23)}`;

export function RequestsSection(props: { tenantId: string }) {
  const filters = useFilters<Filter>(EMPTY, check);
  const { applied: filter, field, draft } = filters;
  const pages = useCursorPages();
  const [page, setPage] = useState<RecentRequestPage | null>(null);
  const [tokens, setTokens] = useState<TokenListing[]>([]);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    api.tokens(props.tenantId).then(
      (r) => setTokens(r.tokens),
      () => setTokens([]),
    );
  }, [props.tenantId]);

  useEffect(() => {
    let live = true;
    setPage(null);
    api
      .requests(props.tenantId, {
        request_id: filter.request_id.trim() || undefined,
        token_id: filter.token_id || undefined,
        status: filter.status.trim() || undefined,
        operation: filter.operation.trim() || undefined,
        from: localToIso(filter.from) || undefined,
        to: localToIso(filter.to) || undefined,
        cursor: pages.cursor,
      })
      .then((p) => live && setPage(p))
      .catch((err: unknown) => live && filters.setErrors(refusal(err, FIELDS)));
    return () => {
      live = false;
    };
  }, [props.tenantId, filter, pages.cursor, reload]);

  const names = new Map(tokens.map((t) => [t.id, `${t.name} …${t.last4}`]));

  return (
    <section aria-labelledby="requests-title">
      <h2 id="requests-title">Requests</h2>
      <p class="hint">
        Each request is kept {Math.round((page?.kept.hours ?? 168) / 24)} days (the newest{' '}
        {count(page?.kept.per_kind ?? 20_000)} answered and the newest{' '}
        {count(page?.kept.per_kind ?? 20_000)} refused or failed), about 10 s after its answer; a
        busy isolate hands over a sample, and the usage history counts every one. Ids, codes and
        timings only: never a body, query or secret (Workers Logs has every log line).
      </p>
      <FilterForm
        label="Find requests"
        formRef={filters.formRef}
        errors={filters.errors}
        apply="Find"
        onApply={() => filters.apply() && pages.restart()}
        reset="Newest, no filter"
        onReset={() => {
          filters.reset();
          pages.restart();
          setReload(reload + 1);
        }}
      >
        <Field
          id="rq-id"
          label="Request id"
          {...field('request_id')}
          placeholder="from X-Request-ID or an error's data.request_id"
        />
        <div class="field">
          <label for="rq-token">Token</label>
          <select
            id="rq-token"
            name="token_id"
            onChange={(e: Event) =>
              field('token_id').onValue((e.target as HTMLSelectElement).value)
            }
          >
            <option value="" selected={draft.token_id === ''}>
              any token
            </option>
            {tokens.map((t) => (
              <option value={t.id} selected={draft.token_id === t.id}>
                {t.name} …{t.last4}
              </option>
            ))}
          </select>
        </div>
        <Field
          id="rq-status"
          label="Status"
          {...field('status')}
          placeholder="429, 4xx"
          hint={`e.g. ${STATUSES.join(', ')}`}
        />
        <Field
          id="rq-operation"
          label="Operation"
          {...field('operation')}
          placeholder="team.list"
        />
        <Field id="rq-from" label="From" type="datetime-local" step="1" {...field('from')} />
        <Field id="rq-to" label="To" type="datetime-local" step="1" {...field('to')} />
      </FilterForm>
      <fieldset class="inline toolbar">
        <legend>Ranges</legend>
        {PRESETS.map(([label, span]) => (
          <button
            type="button"
            onClick={() => {
              const now = Date.now();
              const values = { ...draft, from: msToLocal(now - span), to: msToLocal(now) };
              if (filters.applyValues(values)) pages.restart();
            }}
          >
            {label}
          </button>
        ))}
      </fieldset>
      <HistoryCount tenantId={props.tenantId} filter={filter} />
      {page === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <table class="grid requests" data-testid="request-rows">
          <caption>
            {page.requests.length === 0
              ? 'No request kept matches.'
              : `${plural(page.requests.length, 'request')}, newest first`}
          </caption>
          <ColumnHeads
            names={[
              'When (UTC)',
              'Request id',
              'Token',
              'Operation',
              'Status',
              'Why',
              'Limiter',
              'Cache',
              'Platform',
              'Latency',
              'Trace id',
            ]}
          />
          <tbody>
            {page.requests.map((r) => (
              <tr
                key={r.request_id}
                data-request-id={r.request_id}
                class={r.status >= 400 ? 'failed' : undefined}
              >
                <td title={r.at}>{time(r.at)}</td>
                <td>
                  <code class="id" title={r.request_id}>
                    {r.request_id}
                  </code>
                </td>
                <td>{names.get(r.token_id) ?? r.token_id}</td>
                <td>
                  {r.method} {r.operation}
                  {r.via === 'mcp' ? <span class="hint"> via MCP</span> : null}
                </td>
                <td>
                  {r.status}
                  {r.code !== null ? <span class="hint"> {r.code}</span> : null}
                </td>
                <td>{r.reason ?? '—'}</td>
                <td>{r.limiter ? `${r.limiter}${r.policy ? `: ${r.policy}` : ''}` : '—'}</td>
                <td>{r.cache ?? '—'}</td>
                <td>
                  {r.upstream_status ?? '—'}
                  {r.upstream_attempts && r.upstream_attempts > 1 ? (
                    <span class="hint"> ({r.upstream_attempts} tries)</span>
                  ) : null}
                </td>
                <td>
                  {r.latency_ms} ms
                  {r.upstream_ms !== null ? (
                    <span class="hint"> ({r.upstream_ms} upstream)</span>
                  ) : null}
                </td>
                <td>
                  {r.trace_id ? (
                    <code class="hint id" title={r.trace_id}>
                      {r.trace_id.slice(0, 8)}…
                    </code>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pages.pager(page?.cursor, 'Newer', 'Older')}
    </section>
  );
}

/**
 * What the usage history counts in the range's hours (every request, 90 days by default),
 * filtered as far as it keeps: token, operation, status class.
 */
function HistoryCount(props: { tenantId: string; filter: Filter }) {
  const [said, setSaid] = useState<string | null>(null);
  const f = props.filter;
  useEffect(() => {
    let live = true;
    setSaid(null);
    const to = f.to ? Date.parse(f.to) : Date.now();
    const from = f.from ? Date.parse(f.from) : to - 7 * 24 * HOUR_MS;
    const groups = [
      ...(f.token_id ? ['token'] : []),
      ...(f.operation.trim() ? ['route'] : []),
      ...(f.status.trim() ? ['status'] : []),
    ];
    const status = f.status.trim();
    const statusClass = status ? `${status[0]}xx` : '';
    api
      .analytics(props.tenantId, {
        from: new Date(Math.floor(from / HOUR_MS) * HOUR_MS).toISOString(),
        to: new Date(to).toISOString(),
        granularity: to - from > 7 * 24 * HOUR_MS ? 'day' : 'hour',
        ...(groups.length ? { group_by: groups.join(',') } : {}),
      })
      .then((a: Analytics) => {
        if (!live) return;
        const matching = a.series.filter(
          (p) =>
            (!f.token_id || p.token === f.token_id) &&
            (!f.operation.trim() || p.route === f.operation.trim()) &&
            (!statusClass || p.status === statusClass),
        );
        const total = matching.reduce((n, p) => n + p.requests, 0);
        const exact = status && status !== statusClass ? ` (status class ${statusClass})` : '';
        setSaid(
          `The usage history counts ${plural(total, 'request')}${exact} in the hours from ` +
            `${a.from.slice(0, 16).replace('T', ' ')} to ${a.to.slice(0, 16).replace('T', ' ')} UTC.`,
        );
      })
      .catch((err: unknown) => live && setSaid(refusal(err, [])._form ?? null));
    return () => {
      live = false;
    };
  }, [props.tenantId, f]);
  return said ? (
    <p class="hint" data-testid="history-count">
      {said}
    </p>
  ) : null;
}
