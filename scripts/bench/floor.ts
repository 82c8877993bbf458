/**
 * Starts the checking floor (./floor-worker.ts) on plain workerd, as the bare Worker runs:
 * bundled here with esbuild (the project's own secret look inside), wrangler.toml's
 * compatibility date and flags. Its one token is FLOOR_TOKEN.
 */
import { buildSync } from 'esbuild';
import { type LogLine, startScriptWorker, type WorkerHost } from '../workerd-host';

/** The caller's token the floor knows (a bench value, no secret). */
export const FLOOR_TOKEN = 'floor-bench-token';

export function startFloorWorker(opts: {
  upstreamUrl: string;
  platformKey: string;
  via?: 'direct' | 'entry';
  onLog?: (line: LogLine) => void;
}): Promise<WorkerHost> {
  const script = buildSync({
    entryPoints: [new URL('./floor-worker.ts', import.meta.url).pathname],
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    logLevel: 'warning',
  }).outputFiles[0]!.text;
  // A map of a few tenants, as a gateway's would hold more than one.
  const keys: Record<string, string> = { [FLOOR_TOKEN]: opts.platformKey };
  for (let i = 0; i < 8; i++) keys[`other-token-${i}`] = `sk-other-${i}-${'x'.repeat(24)}`;
  return startScriptWorker(
    script,
    {
      UPSTREAM: opts.upstreamUrl.replace(/\/+$/, ''),
      KEYS: JSON.stringify(keys),
      KEY_HEADER: 'authorization',
    },
    { ...(opts.via ? { via: opts.via } : {}), ...(opts.onLog ? { onLog: opts.onLog } : {}) },
  );
}
