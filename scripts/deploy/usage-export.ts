/**
 * `npm run deploy`, step 3b: the resources the usage export is bound to (docs/BILLING.md,
 * "Deployed"): its queues (`usage-events` and the dead-letter queue `usage-events-dlq`)
 * and its archive bucket, each created when the account lacks it. Each is looked up by
 * name (`wrangler queues info`, `wrangler r2 bucket info`), not found in a list: wrangler
 * lists only the first page of an account's queues. A deploy run again creates nothing.
 */
import { stripVTControlCharacters } from 'node:util';

/** Runs wrangler; with allowFailure a non-zero exit is returned rather than thrown. */
export type RunWrangler = (
  args: string[],
  options: { allowFailure?: boolean },
) => Promise<{ code: number; stdout: string; stderr: string }>;

/** What wrangler's config for the environment says about the export's bindings. */
export interface UsageExportBindings {
  queues?: {
    producers?: { queue: string }[];
    consumers?: { queue: string; dead_letter_queue?: string }[];
  };
  r2_buckets?: { bucket_name?: string }[];
}

/** The lifecycle rule that deletes archived batches (and dead letters) after `days`. */
export const ARCHIVE_RULE = 'expire-archive';

/** Every queue the config produces to, consumes or dead-letters into, once each, in order. */
export function queueNames(config: UsageExportBindings): string[] {
  const { producers = [], consumers = [] } = config.queues ?? {};
  const names = [
    ...producers.map((p) => p.queue),
    ...consumers.flatMap((c) => [c.queue, c.dead_letter_queue ?? '']),
  ];
  return [...new Set(names.filter((n) => n !== ''))];
}

export function bucketNames(config: UsageExportBindings): string[] {
  return [...new Set((config.r2_buckets ?? []).flatMap((b) => b.bucket_name ?? []))];
}

/** Creates the queues and buckets the config names that the account lacks. */
export async function createUsageExportResources(
  config: UsageExportBindings,
  configPath: string,
  archiveDays: number,
  wrangler: RunWrangler,
): Promise<void> {
  const cfg = ['--config', configPath];
  for (const queue of queueNames(config)) {
    const info = await wrangler(['queues', 'info', queue, ...cfg], { allowFailure: true });
    if (exists(info, new RegExp(`^Queue Name: ${literal(queue)}$`, 'm'))) {
      console.log(`Queue ${queue}: exists, left as it is`);
      continue;
    }
    await wrangler(['queues', 'create', queue, ...cfg], {});
    console.log(`Queue ${queue}: created`);
  }
  for (const bucket of bucketNames(config)) {
    const info = await wrangler(['r2', 'bucket', 'info', bucket, ...cfg], { allowFailure: true });
    if (exists(info, new RegExp(`^name:\\s+${literal(bucket)}$`, 'm'))) {
      console.log(`R2 bucket ${bucket}: exists`);
    } else {
      await wrangler(['r2', 'bucket', 'create', bucket, ...cfg], {});
      console.log(`R2 bucket ${bucket}: created`);
    }
    // Checked on every deploy, so a bucket whose rule failed to be added gets it next time.
    const rules = await wrangler(['r2', 'bucket', 'lifecycle', 'list', bucket, ...cfg], {});
    const ruleLine = new RegExp(`^name:\\s+${ARCHIVE_RULE}$`, 'm');
    if (ruleLine.test(stripVTControlCharacters(rules.stdout))) continue;
    const rule = [ARCHIVE_RULE, '--expire-days', String(archiveDays), '--force'];
    await wrangler(['r2', 'bucket', 'lifecycle', 'add', bucket, ...rule, ...cfg], {});
    console.log(`R2 bucket ${bucket}: objects expire after ${archiveDays} days (${ARCHIVE_RULE})`);
  }
}

/**
 * Whether wrangler found the resource: its info printed `found`; a "does not exist" answer
 * means it is absent; any other failure (not logged in, no permission) stops the deploy.
 */
function exists(run: { code: number; stdout: string; stderr: string }, found: RegExp): boolean {
  const output = stripVTControlCharacters(`${run.stdout}\n${run.stderr}`);
  if (run.code === 0 && found.test(output)) return true;
  if (/does not exist|\[code: 10006\]/i.test(output)) return false;
  throw new Error(`wrangler could not say whether it exists:\n${output.trim()}`);
}

function literal(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
