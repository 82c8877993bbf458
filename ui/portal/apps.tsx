/**
 * The apps the partner approved through OAuth (GET /partner/apps), each with where it
 * sends its answers, what it may do, who approved it and when it was last used; the
 * partner revokes one (DELETE /partner/apps/{id}) after a confirmation, and its token is
 * refused everywhere within a second.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import { call } from '../lib/api';
import { fmtTime } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { RevokeCell, RevokeDialog } from './revoke-dialog';
import { messageOf } from './rotate';
import type { PartnerApp } from './types';

export function Apps(props: { token: string }) {
  const [apps, setApps] = useState<PartnerApp[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<PartnerApp | null>(null);
  const auth = { authorization: `Bearer ${props.token}` };

  const load = () =>
    call<{ apps: PartnerApp[] }>('/partner/apps', { headers: auth })
      .then((r) => setApps(r.apps))
      .catch((err) => setError(messageOf(err)));
  useEffect(() => {
    void load();
  }, [props.token]);

  const revoke = async () => {
    const app = revoking;
    setRevoking(null);
    if (!app) return;
    try {
      await call(`/partner/apps/${encodeURIComponent(app.id)}`, {
        method: 'DELETE',
        headers: auth,
      });
      setError(null);
      await load();
      document.getElementById('apps-title')?.focus();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section aria-labelledby="apps-title">
      <h2 id="apps-title" tabIndex={-1}>
        Apps you approved
      </h2>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {apps && apps.length === 0 && <p>No app has access through you.</p>}
      {apps && apps.length > 0 && (
        <table data-testid="apps">
          <caption class="visually-hidden">Each app: where it answers, what it may do</caption>
          <ColumnHeads
            names={['App', 'Sends you back to', 'May', 'Approved', 'Last used', 'State']}
          />
          <tbody>
            {apps.map((app) => (
              <tr>
                <th scope="row">{app.client_name}</th>
                <td>{app.redirect_host}</td>
                <td>
                  <code>{app.scopes.join(' ')}</code>
                </td>
                <td>{fmtTime(app.created_at)}</td>
                <td>{fmtTime(app.last_used_at)}</td>
                <RevokeCell
                  name={app.client_name}
                  revokedAt={app.revoked_at}
                  onRevoke={() => setRevoking(app)}
                />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <RevokeDialog
        name={revoking?.client_name ?? null}
        id="app-revoke-title"
        message="Its access ends now: its tokens are refused within a second, and it must ask you again to come back."
        onCancel={() => setRevoking(null)}
        onConfirm={revoke}
      />
    </section>
  );
}
