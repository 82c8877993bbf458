/**
 * The platform operations these settings serve, for operators:
 * - `GET /admin/operations`: built-in ones (ROUTE_OVERRIDES applied) and those
 *   PLATFORM_OPERATIONS declares, the operation groups, and the scopes and presets a
 *   token may be given. The console builds its scope pickers from it.
 * - `POST /admin/operations/check`: whether a PLATFORM_OPERATIONS value would
 *   parse here, with each problem's entry and field, before it is deployed
 *   (`npm run admin -- operations import` checks what it prints).
 */
import { openApiPath } from '../openapi/document';
import { catalogOf } from '../operations/catalog';
import { platformOperationsSchema } from '../operations/declared';
import { OPERATION_GROUPS } from '../operations/groups';
import { PRESET_NAMES, requiredScope, scopesOf } from '../tenants/scopes';
import { type AdminApp, handle } from './handle';
import * as contract from './operations.contract';

export function operationRoutes(app: AdminApp): void {
  handle(app, contract.listOperations, async (c) => {
    const catalog = catalogOf(c.get('settings'));
    return {
      operations: catalog.operations.map((r) => ({
        id: r.id,
        method: r.method,
        path: openApiPath(r.path),
        upstream_path: openApiPath(r.upstreamPath),
        credential: r.credential,
        group: r.group,
        scope: requiredScope(r),
        cost: r.cost,
        cache: r.cache ?? null,
        timeout_ms: r.timeoutMs,
        declared: r.declared === true,
      })),
      groups: catalog.groups,
      quota_groups: OPERATION_GROUPS,
      scopes: scopesOf(catalog.groups),
      presets: PRESET_NAMES,
    };
  });
  // Any JSON is taken (the definition's body schema refuses none): what would not parse
  // is the answer, not an error.
  handle(app, contract.checkOperations, async (c) => {
    const parsed = platformOperationsSchema.safeParse(c.req.valid('json'));
    const problems = parsed.success
      ? []
      : parsed.error.issues.map((i) => ({
          operation: typeof i.path[0] === 'string' ? i.path[0] : null,
          field: ['PLATFORM_OPERATIONS', ...i.path].join('.'),
          message: i.message,
        }));
    return {
      valid: parsed.success,
      operations: parsed.success ? parsed.data.map((s) => s.id) : [],
      problems,
    };
  });
}
