/**
 * The fleet as a file, in the console (docs/CONFIG-AS-CODE.md): the last plan applied
 * (who, when, its hash, how far it went) and, for admins, the live fleet as a YAML file,
 * the same bytes `npm run admin -- config dump` writes.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { ConfigApplyRecord } from '../../src/types/wire';
import { fleetToYaml } from '../lib/fleet-yaml';
import { fmtTime } from '../lib/format';
import { api } from './api';
import { PageError, refusal } from './form';

/** Saves text as a file the browser downloads. */
function save(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/yaml' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function FleetFilePanel(props: { canDownload: boolean }) {
  const [last, setLast] = useState<ConfigApplyRecord | null | undefined>(undefined);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .configApplies()
      .then((a) => setLast(a.applies[0] ?? null))
      .catch((err: unknown) => setError(refusal(err, [])._form ?? 'Failed'));
  }, []);

  const download = async () => {
    setBusy(true);
    setError('');
    try {
      const file = await api.dumpConfig();
      save(`fleet-${new Date().toISOString().slice(0, 10)}.yaml`, fleetToYaml(file));
    } catch (err) {
      setError(refusal(err, [])._form ?? 'Failed');
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="fleet-file" aria-labelledby="fleet-file-title">
      <h2 id="fleet-file-title">Fleet file</h2>
      {last === undefined && !error ? <p class="loading">Loading…</p> : null}
      {last === null ? (
        <p data-testid="last-applied">
          No fleet file applied yet (<code>npm run admin -- config sync FILE</code>).
        </p>
      ) : null}
      {last ? (
        <p data-testid="last-applied">
          Last applied plan <code title={last.hash}>{last.hash.slice(0, 12)}</code> by{' '}
          <strong>{last.actor}</strong> at {fmtTime(last.at)}: {last.applied} of {last.changes}{' '}
          change(s)
          {last.complete ? '.' : ', stopped part-way: run it again to finish.'}
        </p>
      ) : null}
      {props.canDownload ? (
        <button type="button" onClick={download} disabled={busy}>
          Download as file
        </button>
      ) : (
        <p class="hint">An admin can download the fleet as a file.</p>
      )}
      <PageError error={error} />
    </section>
  );
}
