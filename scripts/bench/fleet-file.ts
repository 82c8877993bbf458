/**
 * A fleet file of N tenants for the config tests and the config benchmark
 * (docs/CONFIG-AS-CODE.md): two plans, each tenant on one of them or with limits of its
 * own, an origin, one or two tokens (some with limits of their own), every platform key
 * from the variable it names.
 */
import type { FleetFileInput } from '../../src/admin/config-file';

export function fleetOf(tenants: number, keyVariable: string, tag = 'fleet'): FleetFileInput {
  return {
    version: 1,
    plans: ['starter', 'business'].map((name, i) => ({
      ref: name,
      name,
      tags: [tag],
      limits: {
        policies: [{ name: 'burst', limit: 100 * (i + 1), window_s: 10 }],
        quota: { daily: 10_000 * (i + 1) },
      },
    })),
    tenants: Array.from({ length: tenants }, (_, i) => {
      const n = String(i + 1).padStart(3, '0');
      return {
        ref: `partner-${n}`,
        name: `Partner ${n}`,
        tags: [tag],
        plan: i % 3 === 2 ? null : i % 2 === 0 ? 'starter' : 'business',
        platform_key_ref: `env:${keyVariable}`,
        cors_origins: [`https://app${n}.partner.example`],
        limits:
          i % 3 === 2
            ? { policies: [{ name: 'burst', limit: 40, window_s: 10 }], quota: {} }
            : null,
        tokens: [
          { ref: 'backend', name: 'backend', scopes: ['full'] },
          ...(i % 2 === 0
            ? [
                {
                  ref: 'reporting',
                  name: 'reporting',
                  scopes: ['read-only'],
                  limits: { policies: [{ name: 'own', limit: 10, window_s: 10 }], quota: {} },
                },
              ]
            : []),
        ],
      };
    }),
  };
}
