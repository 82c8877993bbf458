/** Quota alert webhook (with a test alert) and the cache purge, for one tenant. */
import { useEffect, useRef, useState } from 'hono/jsx/dom';
import { api } from './api';
import {
  ConfirmButton,
  type Errors,
  Field,
  FormError,
  focusFirstError,
  Notice,
  refusal,
  SecretOnce,
} from './form';

export function AlertsSection(props: { tenantId: string; canChange: boolean }) {
  const [current, setCurrent] = useState<{ url: string; thresholds: number[] } | null | undefined>(
    undefined,
  );
  const [url, setUrl] = useState('');
  const [thresholds, setThresholds] = useState('80, 100');
  const [errors, setErrors] = useState<Errors>({});
  const [notice, setNotice] = useState('');
  const [secret, setSecret] = useState('');
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    api
      .alerts(props.tenantId)
      .then((a) => {
        setCurrent(a);
        if (a) {
          setUrl(a.url);
          setThresholds(a.thresholds.join(', '));
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
    setErrors(found);
    if (Object.keys(found).length > 0) return focusFirstError(form.current, found);
    try {
      const set = await api.setAlerts(props.tenantId, { url: url.trim(), thresholds: list });
      setCurrent({ url: set.url, thresholds: set.thresholds });
      setSecret(set.secret);
    } catch (err) {
      const found = refusal(err, ['url', 'thresholds']);
      setErrors(found);
      focusFirstError(form.current, found);
    }
  };

  return (
    <section aria-labelledby="alerts-title">
      <h2 id="alerts-title">Quota alerts</h2>
      <p>
        {current === undefined
          ? 'Loading…'
          : current
            ? `Alerts go to ${current.url} at ${current.thresholds.join(' %, ')} % of each quota.`
            : 'No webhook is set: no quota alert is sent.'}
      </p>
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
              required
            />
            <Field
              id="alert-thresholds"
              name="thresholds"
              label="Thresholds (percent of a quota)"
              value={thresholds}
              onValue={setThresholds}
              error={errors.thresholds}
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
                      const r = await api.testAlert(props.tenantId);
                      setNotice(
                        r.delivered
                          ? `Test alert delivered (HTTP ${r.status}).`
                          : `Test alert not delivered: ${r.status === null ? 'no answer in 10 s' : `HTTP ${r.status}`}.`,
                      );
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
              setNotice(`Cache purged for ${r.tenants} tenant(s).`);
            }}
          />
        </>
      ) : null}
    </section>
  );
}
