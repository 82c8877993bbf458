/**
 * The fleet as a file (docs/CONFIG-AS-CODE.md): plans, tenants and each tenant's
 * long-lived tokens, each with a stable `ref`, and never a secret. The CLI reads it as
 * YAML and sends it as JSON; `GET /admin/config/schema` publishes this schema as JSON
 * Schema. No Worker code: the CLI and the console type-check against this file.
 */
import * as z from 'zod';
import { limitsSchema, tokenLimitsSchema } from '../metering/policy';
import { nameField } from '../operations/schemas';
import { alertsBody } from './alerts.contract';
import { planName } from './plans.contract';
import { corsOrigins } from './tenants.contract';

export const CONFIG_FILE_VERSION = 1;

/** Most tenants one file (or one selection of it) describes (docs/BOUNDS.md). */
export const CONFIG_MAX_TENANTS = 1000;
/** Most plans one file describes. */
export const CONFIG_MAX_PLANS = 200;
/** Most tokens one tenant's entry lists. */
export const CONFIG_MAX_TOKENS = 100;

/** What names an object for good: a rename keeps it, so a rename stays a rename. */
export const refField = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    'ref must be 1 to 64 letters, digits, ".", "_" or "-", from a letter or digit',
  )
  .meta({ description: 'Stable identifier: matched before anything else, kept across renames.' });

export const tagField = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,31}$/,
    'a tag is 1 to 32 lower-case letters, digits, ".", "_", "-"',
  );

const tags = z
  .array(tagField)
  .max(16)
  .default([])
  .meta({ description: '`--select tag=NAME` acts on the objects carrying NAME only.' });

/**
 * Where a platform key comes from: `env:NAME` (the CLI sends the value of the variable NAME
 * with the request; the file never holds it) or `keep` (an existing tenant keeps its key).
 */
export const platformKeyRef = z
  .string()
  .regex(
    /^(keep|env:[A-Za-z_][A-Za-z0-9_]{0,127})$/,
    'platform_key_ref must be keep or env:NAME (an environment variable holding the key)',
  );

export const tokenEntry = z.strictObject({
  ref: refField,
  name: nameField('name', 64),
  scopes: z.array(z.string().max(64)).min(1).max(32),
  expires_at: z.iso
    .datetime({ offset: true, error: 'expires_at must be an ISO 8601 date-time with a zone' })
    .nullable()
    .default(null),
  limits: tokenLimitsSchema.nullable().default(null).meta({
    description: "The token's own limits, counted besides its tenant's (null: none).",
  }),
});

export const tenantEntry = z.strictObject({
  ref: refField,
  name: nameField('name', 100),
  tags,
  status: z.enum(['active', 'disabled']).default('active'),
  plan: refField.nullable().default(null).meta({ description: "A plan's ref (null: no plan)." }),
  platform_key_ref: platformKeyRef,
  cors_origins: corsOrigins.default([]),
  limits: limitsSchema.nullable().default(null).meta({
    description: "The tenant's own limits (null: its plan's, or the gateway's defaults).",
  }),
  alerts: alertsBody.nullable().default(null).meta({
    description:
      'The alert webhook (its signing secret is made by the gateway, never written here).',
  }),
  tokens: z.array(tokenEntry).max(CONFIG_MAX_TOKENS).default([]),
});

export const planEntry = z.strictObject({
  ref: refField,
  name: planName('name'),
  tags,
  limits: limitsSchema,
});

export const fleetFileSchema = z
  .strictObject({
    version: z.literal(CONFIG_FILE_VERSION),
    plans: z.array(planEntry).max(CONFIG_MAX_PLANS).default([]),
    tenants: z.array(tenantEntry).max(CONFIG_MAX_TENANTS).default([]),
  })
  .meta({
    title: 'Edge gateway fleet file',
    description:
      'Plans, tenants and their long-lived tokens (docs/CONFIG-AS-CODE.md). Never a secret.',
  });

/** The file as the gateway reads it (defaults filled in). */
export type FleetFile = z.output<typeof fleetFileSchema>;
export type PlanEntry = z.output<typeof planEntry>;
export type TenantEntry = z.output<typeof tenantEntry>;
export type TokenEntryOf = z.output<typeof tokenEntry>;
/** The file as a person writes it (defaults may be left out). */
export type FleetFileInput = z.input<typeof fleetFileSchema>;
