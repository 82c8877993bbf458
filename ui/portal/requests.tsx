/**
 * The partner's own refused and failed requests (GET /usage/requests, scope
 * usage:read): each with the reason, so a 429 or a 401 can be understood without
 * writing to anyone. The request id an error envelope hands over finds its request.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { RecentRequestPage } from '../../src/types/wire';
import { call } from '../lib/api';
import { ColumnHeads } from '../lib/table';
import { messageOf } from './rotate';

const time = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

export function RecentFailures(props: { token: string }) {
  const [requestId, setRequestId] = useState('');
  const [asked, setAsked] = useState('');
  const [page, setPage] = useState<RecentRequestPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let live = true;
    setError(null);
    const qs = asked ? `?request_id=${encodeURIComponent(asked)}` : '';
    call<RecentRequestPage>(`/usage/requests${qs}`, {
      headers: { authorization: `Bearer ${props.token}` },
    })
      .then((p) => live && setPage(p))
      .catch((err: unknown) => live && setError(messageOf(err)));
    return () => {
      live = false;
    };
  }, [props.token, asked, reload]);

  return (
    <section aria-labelledby="failures-title">
      <h2 id="failures-title">Refused and failed requests</h2>
      <p class="hint">
        Your requests of the last 7 days that the gateway refused or that failed, newest first, each
        with the reason. One shows here about 10 s after its answer.
      </p>
      <form
        class="row"
        onSubmit={(e: Event) => {
          e.preventDefault();
          setAsked(requestId.trim());
          setReload(reload + 1);
        }}
      >
        <label for="failure-id" class="inline">
          Request id (an error's <code>data.request_id</code>)
        </label>
        <input
          id="failure-id"
          name="request_id"
          value={requestId}
          spellcheck={false}
          autocomplete="off"
          onInput={(e: Event) => setRequestId((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Find</button>
      </form>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {page === null ? (
        <p class="hint">Loading…</p>
      ) : page.requests.length === 0 ? (
        <p data-testid="no-failures">
          {asked
            ? `No refused or failed request has the id ${asked}.`
            : 'None: every request of the last 24 h was answered.'}
        </p>
      ) : (
        <table data-testid="failure-rows">
          <caption class="visually-hidden">Refused and failed requests, newest first</caption>
          <ColumnHeads names={['When', 'Request id', 'Operation', 'Status', 'Why']} />
          <tbody>
            {page.requests.map((r) => (
              <tr data-request-id={r.request_id}>
                <td>{time(r.at)}</td>
                <td>
                  <code>{r.request_id}</code>
                </td>
                <td>
                  {r.method} {r.operation}
                  {r.via === 'mcp' ? <span class="hint"> via MCP</span> : null}
                </td>
                <td>
                  {r.status} ({r.code ?? '—'})
                </td>
                <td>{r.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
