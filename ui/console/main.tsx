/**
 * The operator console (/console/, docs/CONSOLE.md): static assets that call
 * the operator API with the browser's Cloudflare Access session. The signed-in
 * role decides which controls exist: a viewer gets none that change anything
 * (and the API refuses a viewer's change anyway, 403 40304).
 */
import 'uplot/dist/uPlot.min.css';
import { render, useEffect, useState } from 'hono/jsx/dom';
import type { Whoami } from '../../src/types/wire';
import { ApiError } from '../lib/api';
import { api } from './api';
import { AuditPage } from './audit';
import { FleetFilePanel } from './fleet-file';
import { OverviewPage } from './overview';
import { PlansPage } from './plans';
import { TenantPage } from './tenant';
import { TenantsPage } from './tenants';

type View =
  | { page: 'overview' }
  | { page: 'tenants' }
  | { page: 'plans' }
  | { page: 'tenant'; id: string }
  | { page: 'audit'; tenant?: string };

/**
 * The view in the URL's fragment (#tenants, #tenant/ten_…, #audit, #audit/ten_…):
 * reload and back work.
 */
function viewOf(hash: string): View {
  const tenant = /^#tenant\/(ten_[0-9A-Za-z]{16})$/.exec(hash);
  if (tenant?.[1]) return { page: 'tenant', id: tenant[1] };
  const audit = /^#audit(?:\/(ten_[0-9A-Za-z]{16}))?$/.exec(hash);
  if (audit) return audit[1] ? { page: 'audit', tenant: audit[1] } : { page: 'audit' };
  if (hash === '#plans') return { page: 'plans' };
  if (hash === '#tenants') return { page: 'tenants' };
  // The first page: the fleet overview.
  return { page: 'overview' };
}

function hashOf(v: View): string {
  if (v.page === 'tenant') return `#tenant/${v.id}`;
  if (v.page === 'audit' && v.tenant) return `#audit/${v.tenant}`;
  return `#${v.page}`;
}

function App() {
  const [me, setMe] = useState<Whoami | null>(null);
  const [problem, setProblem] = useState('');
  // Signed out of a local gateway (npm start): where its local Access signs in.
  const [signIn, setSignIn] = useState<string | null>(null);
  const [view, setViewState] = useState<View>(viewOf(location.hash));
  const setView = (v: View) => {
    if (location.hash !== hashOf(v)) location.hash = hashOf(v);
    setViewState(v);
  };

  useEffect(() => {
    const follow = () => setViewState(viewOf(location.hash));
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);

  useEffect(() => {
    api
      .whoami()
      .then(setMe)
      .catch((err: unknown) => {
        const signedOut = err instanceof ApiError && err.status === 401;
        setProblem(
          signedOut
            ? 'You are not signed in: open the console through Cloudflare Access.'
            : `The console cannot reach the operator API: ${String(err)}`,
        );
        const local = signedOut ? err.data.sign_in : undefined;
        if (typeof local === 'string' && /^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(local)) {
          setSignIn(local);
        }
      });
  }, []);

  if (problem) {
    return (
      <main id="main">
        <h1>Gateway console</h1>
        <p class="form-error" role="alert">
          {problem}
        </p>
        {signIn ? (
          <p data-testid="local-sign-in">
            This gateway signs operators in with its local stand-in for Access (npm start):{' '}
            <a href={`${signIn}?as=admin&to=${encodeURIComponent(location.href)}`}>
              sign in as the local admin
            </a>{' '}
            or{' '}
            <a href={`${signIn}?as=viewer&to=${encodeURIComponent(location.href)}`}>
              as the local viewer
            </a>
            .
          </p>
        ) : null}
      </main>
    );
  }
  if (!me) return <p class="loading">Loading the console…</p>;
  const canChange = me.role === 'admin';
  const nav = (target: View, label: string) => (
    <button
      type="button"
      class="tab"
      aria-current={view.page === target.page ? 'page' : undefined}
      onClick={() => setView(target)}
    >
      {label}
    </button>
  );
  return (
    <>
      <header class="top">
        <p class="brand">Gateway console</p>
        <nav aria-label="Console">
          {nav({ page: 'overview' }, 'Overview')}
          {nav({ page: 'tenants' }, 'Tenants')}
          {nav({ page: 'plans' }, 'Plans')}
          {nav({ page: 'audit' }, 'Audit log')}
        </nav>
        <p class="who" data-testid="whoami">
          Signed in as <strong>{me.actor}</strong>{' '}
          <span class={`role role-${me.role}`}>{me.role}</span>
          {canChange ? null : <span class="hint"> (read only)</span>}
        </p>
      </header>
      <main id="main" tabindex={-1}>
        {view.page === 'overview' ? (
          <>
            <OverviewPage open={(id) => setView({ page: 'tenant', id })} />
            <FleetFilePanel canDownload={canChange} />
          </>
        ) : null}
        {view.page === 'tenants' ? (
          <TenantsPage canChange={canChange} open={(id) => setView({ page: 'tenant', id })} />
        ) : null}
        {view.page === 'tenant' ? (
          <TenantPage
            id={view.id}
            canChange={canChange}
            settings={me.settings}
            back={() => setView({ page: 'tenants' })}
            audit={() => setView({ page: 'audit', tenant: view.id })}
          />
        ) : null}
        {view.page === 'plans' ? <PlansPage canChange={canChange} /> : null}
        {view.page === 'audit' ? <AuditPage key={view.tenant ?? ''} tenant={view.tenant} /> : null}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
