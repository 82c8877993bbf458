/** Quota alert webhook (with a test alert) and the cache purge, for one tenant. */
import { useEffect, useState } from 'hono/jsx/dom';
import type { AlertPayload, AlertSettings, AlertTest, RecentAlert } from '../../src/types/wire';
import { fmtTime, plural } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import {
  ConfirmButton,
  type Errors,
  Field,
  FormError,
  Notice,
  refusal,
  SecretOnce,
  useFormErrors,
} from './form';

/** What a test delivery came to, in words (the receiver's status, or why there is none). */
export function testOutcome(r: AlertTest): string {
  if (r.delivered) return `Test alert delivered (HTTP ${r.status}).`;
  if (r.status !== null) return `Test alert not delivered: the receiver answered HTTP ${r.status}.`;
  if (r.failure === 'timeout') return 'Test alert not delivered: no answer within 10 s.';
  if (r.failure === 'secret_unavailable') {
    return "Test alert not sent: the webhook's signing secret can no longer be opened (its key left KEY_ENCRYPTION_KEY); save the webhook again.";
  }
  return `Test alert not delivered: the receiver could not be reached (no connection, after ${r.ms} ms).`;
}

export function AlertsSection(props: {
  tenantId: string;
  canChange: boolean;
  /** WEBHOOK_LOCAL_TARGETS=allow (development): the rules production keeps are off. */
  localTargets: boolean;
}) {
  const [current, setCurrent] = useState<AlertSettings | null | undefined>(undefined);
  const [url, setUrl] = useState('');
  const [thresholds, setThresholds] = useState('80, 100');
  const [errorShare, setErrorShare] = useState('10');
  const [errors, setErrors] = useState<Errors>({});
  const [notice, setNotice] = useState('');
  const [secret, setSecret] = useState('');
  const { form, showErrors, showRefusal } = useFormErrors(setErrors);

  useEffect(() => {
    api
      .alerts(props.tenantId)
      .then((a) => {
        setCurrent(a);
        if (a) {
          setUrl(a.url);
          setThresholds(a.thresholds.join(', '));
          setErrorShare(String(a.server_error_percent));
        }
      })
      .catch((err: unknown) => setErrors(refusal(err, [])));
  }, [props.tenantId]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setNotice('');
    const found: Errors = {};
    if (!/^https?:\/\/\S+$/.test(url.trim()))
      found.url = 'An http(s) URL, e.g. https://hooks.example.com/quota';
    const list = thresholds
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number);
    if (
      list.length < 1 ||
      list.length > 10 ||
      !list.every((n) => Number.isInteger(n) && n >= 1 && n <= 100)
    ) {
      found.thresholds = '1 to 10 percents from 1 to 100, e.g. 80, 100';
    }
    const share = Number(errorShare);
    if (!/^\d+$/.test(errorShare.trim()) || share < 1 || share > 100) {
      found.server_error_percent = 'A percent from 1 to 100';
    }
    if (showErrors(found)) return;
    try {
      const set = await api.setAlerts(props.tenantId, {
        url: url.trim(),
        thresholds: list,
        server_error_percent: share,
      });
      setCurrent({
        url: set.url,
        thresholds: set.thresholds,
        server_error_percent: set.server_error_percent,
      });
      setSecret(set.secret);
    } catch (err) {
      showRefusal(err, ['url', 'thresholds', 'server_error_percent']);
    }
  };

  return (
    <section aria-labelledby="alerts-title">
      <h2 id="alerts-title">Alerts</h2>
      <p>
        {current === undefined
          ? 'Loading…'
          : current
            ? `Alerts go to ${current.url}: at ${current.thresholds.join(' %, ')} % of each quota, when the platform refuses the tenant's key, and when server errors reach ${current.server_error_percent} % of an hour's requests.`
            : 'No webhook is set: alerts are only listed below.'}
      </p>
      <RecentAlerts tenantId={props.tenantId} />
      {notice ? <Notice text={notice} /> : null}
      {secret ? (
        <SecretOnce
          label="The webhook's signing secret"
          secret={secret}
          onDone={() => setSecret('')}
        />
      ) : null}
      {props.canChange ? (
        <>
          <form
            ref={form}
            class="card"
            onSubmit={submit}
            noValidate
            aria-labelledby="alerts-edit-title"
          >
            <h3 id="alerts-edit-title">Webhook</h3>
            <FormError errors={errors} />
            <Field
              id="alert-url"
              name="url"
              label="Webhook URL"
              type="url"
              value={url}
              onValue={setUrl}
              error={errors.url}
              hint="https only, without credentials, and not a loopback, private or link-local address."
              required
            />
            {props.localTargets ? (
              <p class="warning" data-testid="local-targets">
                This gateway allows local webhook targets (WEBHOOK_LOCAL_TARGETS=allow, for local
                development): http:// and private addresses are accepted here. Production refuses
                them.
              </p>
            ) : null}
            <Field
              id="alert-thresholds"
              name="thresholds"
              label="Thresholds (percent of a quota)"
              value={thresholds}
              onValue={setThresholds}
              error={errors.thresholds}
            />
            <Field
              id="alert-error-share"
              name="server_error_percent"
              label="Server errors: alert at this share of an hour's requests (percent)"
              inputmode="numeric"
              value={errorShare}
              onValue={setErrorShare}
              error={errors.server_error_percent}
              hint="Counted from 20 requests an hour; the platform refusing the key has its own alert."
            />
            <div class="actions">
              <button type="submit" class="primary">
                Save webhook
              </button>
              {current ? (
                <button
                  type="button"
                  onClick={async () => {
                    setNotice('Sending a test alert…');
                    try {
                      setNotice(testOutcome(await api.testAlert(props.tenantId)));
                    } catch (err) {
                      setNotice(refusal(err, [])._form ?? 'Failed');
                    }
                  }}
                >
                  Send a test alert
                </button>
              ) : null}
              {current ? (
                <ConfirmButton
                  label="Remove webhook"
                  title="Remove the webhook?"
                  message="No quota alert is sent until a webhook is set again."
                  confirmLabel="Remove"
                  danger
                  onConfirm={async () => {
                    await api.removeAlerts(props.tenantId);
                    setCurrent(null);
                    setUrl('');
                  }}
                />
              ) : null}
            </div>
          </form>
          <h2>Cache</h2>
          <p>
            A purge drops every cached answer of this tenant and of the tenants sharing its platform
            key.
          </p>
          <ConfirmButton
            label="Purge cache"
            title="Purge the cache?"
            message="Cached answers are dropped at once; the next reads go to the platform."
            confirmLabel="Purge"
            onConfirm={async () => {
              const r = await api.purge(props.tenantId);
              setNotice(`Cache purged for ${plural(r.tenants, 'tenant')}.`);
            }}
          />
        </>
      ) : null}
    </section>
  );
}

/** What an alert says, in words. */
export function alertText(a: AlertPayload): string {
  switch (a.kind) {
    case 'quota':
      return `Quota ${a.policy} at ${a.threshold} %: ${a.used} of ${a.limit} used`;
    case 'platform_key_rejected':
      return `The platform refused the tenant's platform key (HTTP ${a.upstream_status})`;
    case 'server_errors':
      return `Server errors were ${a.share_percent} % of ${a.requests} requests in the hour (threshold ${a.threshold} %)`;
  }
}

const DELIVERY: Record<RecentAlert['delivery'], string> = {
  pending: 'being delivered',
  delivered: 'delivered',
  failed: 'not delivered (5 tries)',
  no_webhook: 'no webhook set',
};

/** The alerts the tenant's guard raised, newest first, and what became of each. */
function RecentAlerts(props: { tenantId: string }) {
  const [alerts, setAlerts] = useState<RecentAlert[] | null>(null);
  useEffect(() => {
    api.recentAlerts(props.tenantId).then(
      (r) => setAlerts(r.alerts),
      () => setAlerts([]),
    );
  }, [props.tenantId]);
  if (alerts === null) return <p class="loading">Loading the alerts…</p>;
  if (alerts.length === 0) return <p class="hint">No alert raised yet.</p>;
  return (
    <table class="grid" data-testid="recent-alerts">
      <caption>Alerts raised (the last 100)</caption>
      <ColumnHeads names={['When', 'What', 'Webhook']} />
      <tbody>
        {alerts.map((a) => (
          <tr key={a.id} class={a.alert.kind === 'quota' ? undefined : 'alert-row'}>
            <td>{fmtTime(a.at)}</td>
            <td>{alertText(a.alert)}</td>
            <td>{DELIVERY[a.delivery]}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
