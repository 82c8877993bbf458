/**
 * `npm run admin -- config dump | diff FILE | sync FILE | apply FILE` (docs/CONFIG-AS-CODE.md):
 * the fleet as a YAML file. The CLI reads and writes YAML and sends JSON; the gateway
 * plans (POST /admin/config/plan) and applies (POST /admin/config/apply, If-Match on the
 * plan's hash). Platform keys come from the environment variables the file names
 * (`platform_key_ref: env:NAME`); a sealed backup's passphrase from CONFIG_BACKUP_KEY.
 *
 * Exit codes: 0 done (diff: nothing differs), 1 diff: something differs, 2 refused or failed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { ConfigChange, ConfigPlan, ConfigSecret, ErrorData } from '../../src/types/wire';
import type { Envelope } from '../../ui/lib/admin-client';
import { fleetToYaml } from '../../ui/lib/fleet-yaml';
import { CliError, type Client } from './client';
import { FleetYamlError, fleetFromYaml } from './fleet-yaml-read';
import { printable } from './printable';

export const CONFIG_HELP = `Fleet file (docs/CONFIG-AS-CODE.md; exit 0 done, 1 diff found differences, 2 refused)
  config dump [--select tag=NAME] [--out FILE]           the fleet as YAML (no secret)
  config dump --sealed --out FILE [--select tag=NAME]    an encrypted backup: keys and token records,
                                                         sealed with CONFIG_BACKUP_KEY (16+ characters)
  config diff FILE [--select tag=NAME]                   what sync would change, field by field
  config sync FILE [--select tag=NAME]                   make the fleet the file: renames, creates,
                                                         updates, deletes last (FILE may be a sealed backup)
  config apply FILE [--select tag=NAME]                  the same, without deletes
  Platform keys: platform_key_ref: env:NAME reads the variable NAME here; keep leaves a tenant's key.`;

/** An error of the config commands: its lines are printed, and the CLI exits 2. */
export class ConfigRefused extends CliError {}

const SEALED_PREFIX = 'apgw-backup.v1.';

export interface ConfigOptions {
  select?: string;
  out?: string;
  sealed?: boolean;
}

type Say = (line: string) => void;

export async function runConfig(
  api: Client,
  sub: string,
  args: string[],
  o: ConfigOptions,
  say: Say = (line) => console.log(printable(line)),
): Promise<number> {
  const select = tagOf(o.select);
  switch (sub) {
    case 'dump':
      return o.sealed ? dumpSealed(api, select, o.out, say) : dump(api, select, o.out, say);
    case 'diff':
    case 'sync':
    case 'apply': {
      const file = args[0];
      if (!file) throw new ConfigRefused(`Missing FILE: config ${sub} FILE`);
      const body = {
        ...requestOf(file),
        ...(select ? { select } : {}),
        mode: sub === 'apply' ? 'apply' : 'sync',
      } as const;
      const plan = await planOf(api, body);
      printPlan(plan, say);
      if (sub === 'diff') return plan.changes.length === 0 ? 0 : 1;
      if (plan.changes.length === 0) return 0;
      return applyPlan(api, body, plan.hash, say);
    }
    default:
      throw new ConfigRefused(`Unknown command "config ${sub}". Run "npm run admin -- --help".`);
  }
}

/** `--select tag=NAME` (the one selector there is). */
function tagOf(select: string | undefined): string | undefined {
  if (select === undefined) return undefined;
  const m = /^tag=(.+)$/.exec(select);
  if (!m) throw new ConfigRefused(`--select must look like tag=NAME, got "${select}"`);
  return m[1];
}

async function dump(api: Client, tag: string | undefined, out: string | undefined, say: Say) {
  const file = await api.data(api.admin.config.$get({ query: tag ? { tag } : {} }));
  const text = fleetToYaml(file);
  if (out) {
    writeFileSync(out, text);
    say(`Wrote ${file.plans.length} plan(s) and ${file.tenants.length} tenant(s) to ${out}.`);
  } else process.stdout.write(text);
  return 0;
}

async function dumpSealed(api: Client, tag: string | undefined, out: string | undefined, say: Say) {
  if (!out) throw new ConfigRefused('config dump --sealed writes a file: give --out FILE');
  const archive_key = backupKey();
  const data = await api.data(
    api.admin.config.backup.$post({ json: { archive_key, ...(tag ? { select: tag } : {}) } }),
  );
  writeFileSync(out, `${data.archive}\n`, { mode: 0o600 });
  say(
    `Wrote a sealed backup of ${data.tenants} tenant(s) and ${data.tokens} token(s) to ${out} ` +
      '(keep CONFIG_BACKUP_KEY apart from it: it alone opens it).',
  );
  return 0;
}

function backupKey(): string {
  const key = process.env.CONFIG_BACKUP_KEY;
  if (!key || key.length < 16) {
    throw new ConfigRefused(
      'Set CONFIG_BACKUP_KEY to the backup passphrase (16 characters or more).',
    );
  }
  return key;
}

type Request =
  | { config: Record<string, unknown>; platform_keys: Record<string, string> }
  | { archive: string; archive_key: string };

/** The request body for a file: a sealed backup as is, YAML as JSON with the keys it names. */
function requestOf(path: string): Request {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigRefused(`Cannot read ${path}: ${(err as Error).message}`);
  }
  if (text.startsWith(SEALED_PREFIX)) return { archive: text.trim(), archive_key: backupKey() };
  let config: unknown;
  try {
    config = fleetFromYaml(text);
  } catch (err) {
    if (err instanceof FleetYamlError) throw new ConfigRefused(`${path}: ${err.message}`);
    throw err;
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) {
    throw new ConfigRefused(`${path}: a fleet file is a YAML mapping (version, plans, tenants)`);
  }
  return { config: config as Record<string, unknown>, platform_keys: keysNamed(config) };
}

/** The values of the variables `platform_key_ref: env:NAME` names, those that are set. */
function keysNamed(config: object): Record<string, string> {
  const keys: Record<string, string> = {};
  const tenants = (config as { tenants?: unknown }).tenants;
  for (const t of Array.isArray(tenants) ? tenants : []) {
    const ref = (t as { platform_key_ref?: unknown })?.platform_key_ref;
    const name = typeof ref === 'string' && ref.startsWith('env:') ? ref.slice(4) : null;
    const value = name ? process.env[name] : undefined;
    if (name && value) keys[name] = value;
  }
  return keys;
}

type Body = Request & { select?: string; mode: 'sync' | 'apply' };

async function planOf(api: Client, body: Body): Promise<ConfigPlan> {
  const res = await api.admin.config.plan.$post({ json: body });
  return answered<ConfigPlan>(res, 'The gateway refused the file');
}

async function applyPlan(api: Client, body: Body, hash: string, say: Say): Promise<number> {
  const res = await api.admin.config.apply.$post(
    { json: body },
    { headers: { 'if-match': `"${hash}"` } },
  );
  const envelope = (await res.json()) as Envelope<unknown>;
  if (envelope.code === 40903) {
    const data = envelope.data as ErrorData & {
      applied: ConfigChange[];
      not_applied: ConfigChange[];
      secrets: ConfigSecret[];
    };
    say(`\n${envelope.msg}`);
    say(`Applied (${data.applied.length}):`);
    for (const c of data.applied) say(`  ${headline(c)}`);
    say(`Not applied (${data.not_applied.length}):`);
    for (const c of data.not_applied) say(`  ${headline(c)}`);
    printSecrets(data.secrets, say);
    return 2;
  }
  const done = answeredEnvelope<{ applied: ConfigChange[]; secrets: ConfigSecret[] }>(
    res.status,
    envelope as Envelope<{ applied: ConfigChange[]; secrets: ConfigSecret[] }>,
    'The gateway refused the apply',
  );
  say(`\nApplied ${done.applied.length} change(s) (plan ${hash.slice(0, 12)}).`);
  for (const c of done.applied.filter((x) => x.source === 'reissued')) {
    say(`  re-issued ${c.tenant_ref}/${c.ref}: ${c.note}`);
  }
  printSecrets(done.secrets, say);
  return 0;
}

function printSecrets(secrets: ConfigSecret[], say: Say) {
  if (secrets.length === 0) return;
  say('\nNew secrets, shown only now (never written to the file):');
  for (const s of secrets) {
    const what =
      s.kind === 'token'
        ? `token ${s.tenant_ref}/${s.ref} (${s.id})`
        : `webhook signing secret of ${s.tenant_ref}`;
    say(`  ${what}: ${s.secret}`);
  }
}

async function answered<T>(
  res: { status: number; json(): Promise<unknown> },
  refused: string,
): Promise<T> {
  return answeredEnvelope<T>(res.status, (await res.json()) as Envelope<T>, refused);
}

/** The data of a success envelope; a ConfigRefused listing each problem by its path. */
function answeredEnvelope<T>(status: number, envelope: Envelope<T>, refused: string): T {
  if (envelope.code === 0) return envelope.data;
  const data = (envelope.data ?? {}) as Partial<ErrorData>;
  const lines = [`${refused}: ${envelope.msg} [code ${envelope.code}, HTTP ${status}]`];
  for (const e of data.errors ?? [])
    lines.push(`  ${e.field}: ${e.message.replace(`${e.field}: `, '')}`);
  throw new ConfigRefused(lines.join('\n'));
}

const SIGN = { rename: '>', create: '+', update: '~', delete: '-' } as const;

function headline(c: ConfigChange): string {
  const who = c.kind === 'token' ? `${c.tenant_ref}/${c.ref}` : c.ref;
  const id = c.id && c.id !== c.ref ? ` (${c.id})` : '';
  const source = c.source ? ` [${c.source}]` : '';
  return `${SIGN[c.op]} ${c.op} ${c.kind} ${who}${id}${source}`;
}

const shown = (v: unknown) => (v === null || v === undefined ? '-' : JSON.stringify(v));

/** The plan, a change a line and a field a line below it, then the counts. */
export function printPlan(plan: ConfigPlan, say: Say) {
  for (const w of plan.warnings) say(`warning: ${w}`);
  if (plan.changes.length === 0) {
    say('No differences: the fleet is the file.');
    return;
  }
  for (const c of plan.changes) {
    say(headline(c));
    for (const f of c.fields) {
      say(
        c.op === 'create'
          ? `    ${f.field}: ${shown(f.after)}`
          : `    ${f.field}: ${shown(f.before)} -> ${shown(f.after)}`,
      );
    }
    if (c.note) say(`    note: ${c.note}`);
  }
  const n = plan.counts;
  say(
    `Plan ${plan.hash.slice(0, 12)}: ${n.rename} rename(s), ${n.create} create(s), ${n.update} update(s), ${n.delete} delete(s).`,
  );
}
