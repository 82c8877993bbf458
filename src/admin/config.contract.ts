/**
 * The fleet as a file (docs/CONFIG-AS-CODE.md): its JSON Schema, a dump, the plan of a
 * file against the fleet, its apply (If-Match on the plan's hash), sealed backups, and
 * the applies made. The CLI sends the file as JSON; the Worker never reads YAML.
 */
import * as z from 'zod';
import type {
  ConfigApplied,
  ConfigApplyRecord,
  ConfigChange,
  ConfigPlan,
  ConfigSecret,
} from '../types/wire';
import { fleetFileSchema, tagField } from './config-file';
import { instant, int } from './fields';
import { adminOperation, answerOf } from './operation';
import { platformKey } from './tenants.contract';

/** Largest plan, apply or backup request (a file or a sealed backup; docs/BOUNDS.md). */
export const CONFIG_MAX_BYTES = 4 * 1024 * 1024;

/** The passphrase a sealed backup is sealed with (CONFIG_BACKUP_KEY): never the gateway's key. */
const archiveKey = z
  .string()
  .min(16, 'archive_key must be 16 to 1024 characters')
  .max(1024, 'archive_key must be 16 to 1024 characters');

export const configBody = z
  .strictObject({
    /** The fleet file, as JSON (the CLI converts YAML). */
    config: z.record(z.string(), z.unknown()).optional(),
    /** Or a sealed backup (`config dump --sealed`), with the passphrase it was sealed with. */
    archive: z.string().max(CONFIG_MAX_BYTES).optional(),
    archive_key: archiveKey.optional(),
    /** The values of the variables the file's `platform_key_ref: env:NAME` name, by NAME. */
    platform_keys: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'a variable name'), platformKey)
      .default({}),
    /** Only the objects carrying this tag (in the file or the fleet) are compared and changed. */
    select: tagField.optional(),
    /** `sync` deletes what the file leaves out; `apply` only creates and updates. */
    mode: z.enum(['sync', 'apply']).default('sync'),
  })
  .refine((b) => (b.config === undefined) !== (b.archive === undefined), {
    message: 'give config (a fleet file) or archive (a sealed backup), one of them',
    path: ['config'],
  })
  .refine((b) => b.archive === undefined || b.archive_key !== undefined, {
    message: 'archive_key: a sealed backup needs the passphrase it was sealed with',
    path: ['archive_key'],
  });

export const dumpQuery = z.strictObject({ tag: tagField.optional() });

export const backupBody = z.strictObject({
  archive_key: archiveKey,
  select: tagField.optional(),
});

const fieldChange = () => z.object({ field: z.string(), before: z.unknown(), after: z.unknown() });

export const configChange = () =>
  answerOf<ConfigChange>()(
    z.object({
      op: z.enum(['rename', 'create', 'update', 'delete']),
      kind: z.enum(['plan', 'tenant', 'token']),
      ref: z.string(),
      tenant_ref: z.string().nullable(),
      id: z.string().nullable(),
      name: z.string(),
      fields: z.array(fieldChange()),
      source: z.enum(['restored', 'reissued']).nullable(),
      note: z.string().nullable(),
    }),
  );

const configSecret = () =>
  answerOf<ConfigSecret>()(
    z.object({
      kind: z.enum(['token', 'webhook']),
      tenant_ref: z.string(),
      ref: z.string().nullable(),
      id: z.string().nullable(),
      secret: z.string(),
    }),
  );

export const configSchema = adminOperation({
  method: 'get',
  path: '/admin/config/schema',
  role: 'viewer',
  summary: 'The JSON Schema of the fleet file',
  envelope: false,
  answer: () => z.record(z.string(), z.unknown()).meta({ description: 'A JSON Schema (2020-12).' }),
});

export const dumpConfig = adminOperation({
  method: 'get',
  path: '/admin/config',
  role: 'admin',
  summary: 'The fleet as a file (never a secret); with tag, the objects carrying it',
  description:
    'Admins only: alert webhook URLs may carry their receiver’s credentials, which a ' +
    'viewer never sees.',
  query: dumpQuery,
  answer: () => fleetFileSchema,
});

export const planConfig = adminOperation({
  method: 'post',
  path: '/admin/config/plan',
  role: 'admin',
  summary:
    'What a fleet file (or a sealed backup) would change, field by field; nothing is changed',
  bodyLimit: CONFIG_MAX_BYTES,
  description:
    'Renames first, then creates, updates, and deletes last (`mode: "apply"` never deletes). ' +
    'The answer’s `hash` (also the `ETag` header) names this plan: an apply sends it as ' +
    '`If-Match`, and is refused (412) when the fleet changed since. A file with problems ' +
    'is refused whole (40001), each problem named by its path in the file.',
  body: configBody,
  answer: () =>
    answerOf<ConfigPlan>()(
      z.object({
        hash: z.string(),
        changes: z.array(configChange()),
        counts: z.object({ rename: int(), create: int(), update: int(), delete: int() }),
        warnings: z.array(z.string()),
      }),
    ),
});

export const applyConfig = adminOperation({
  method: 'post',
  path: '/admin/config/apply',
  role: 'admin',
  audit: 'config.<kind>.<op>',
  summary: 'Apply a planned fleet file: If-Match names the plan (its hash)',
  bodyLimit: CONFIG_MAX_BYTES,
  description:
    '428 (42800) without If-Match; 412 (41200) when the fleet changed since the plan; 409 ' +
    '(40900) while another apply runs. Each change is audited as `config.<kind>.<op>` with ' +
    'the plan’s hash. A change that fails stops the apply (409, 40903): `data.applied`, ' +
    '`data.not_applied`, `data.failed` and the secrets made so far; running it again ' +
    'finishes it. New tokens’ and webhooks’ secrets are in the answer, once.',
  body: configBody,
  answer: () =>
    answerOf<ConfigApplied>()(
      z.object({
        hash: z.string(),
        applied: z.array(configChange()),
        secrets: z.array(configSecret()),
      }),
    ),
});

export const backupConfig = adminOperation({
  method: 'post',
  path: '/admin/config/backup',
  role: 'admin',
  audit: 'config.backup',
  summary:
    'A sealed backup: the fleet file with platform keys and token records, sealed with archive_key',
  description:
    'Sealed with the passphrase given (PBKDF2, AES-256-GCM), never with KEY_ENCRYPTION_KEY. ' +
    'Token records hold hashes, never tokens. `config sync` restores it (POST ' +
    '/admin/config/plan and /apply with `archive`).',
  body: backupBody,
  answer: () =>
    z.object({ archive: z.string(), tenants: int(), tokens: int(), made_at: instant() }),
});

export const configApplies = adminOperation({
  method: 'get',
  path: '/admin/config/applies',
  role: 'viewer',
  summary: 'The applies made, newest first: who, when, which plan, how far',
  answer: () =>
    z.object({
      applies: z.array(
        answerOf<ConfigApplyRecord>()(
          z.object({
            hash: z.string(),
            at: instant(),
            actor: z.string(),
            request_id: z.string(),
            changes: int(),
            applied: int(),
            complete: z.boolean(),
          }),
        ),
      ),
    }),
});
