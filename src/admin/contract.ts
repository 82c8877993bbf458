/**
 * Every operation of the operator API, by name: the definitions of the `*.contract.ts`
 * files (each file's exports that are definitions; its schemas are not). A new
 * operation is a definition in its area's file and a handler beside it; a new area's
 * file is added here. `AdminApi` types the console's and the CLI's client.
 */
import * as alerts from './alerts.contract';
import * as analytics from './analytics.contract';
import * as audit from './audit.contract';
import * as config from './config.contract';
import * as keyCheck from './key-check.contract';
import * as limits from './limits.contract';
import * as oauth from './oauth.contract';
import { type AdminOperation, type ApiOf, isAdminOperation, type OperationsIn } from './operation';
import * as operations from './operations.contract';
import * as overview from './overview.contract';
import * as plans from './plans.contract';
import * as portalLinks from './portal-links.contract';
import * as requests from './requests.contract';
import * as system from './system.contract';
import * as tenants from './tenants.contract';
import * as tokens from './tokens.contract';
import * as usageExport from './usage-export.contract';

const AREAS = [
  tenants,
  tokens,
  limits,
  usageExport,
  analytics,
  requests,
  alerts,
  portalLinks,
  oauth,
  plans,
  overview,
  keyCheck,
  audit,
  operations,
  system,
  config,
];

export type AdminOperations = OperationsIn<typeof tenants> &
  OperationsIn<typeof tokens> &
  OperationsIn<typeof limits> &
  OperationsIn<typeof usageExport> &
  OperationsIn<typeof analytics> &
  OperationsIn<typeof requests> &
  OperationsIn<typeof alerts> &
  OperationsIn<typeof portalLinks> &
  OperationsIn<typeof oauth> &
  OperationsIn<typeof plans> &
  OperationsIn<typeof overview> &
  OperationsIn<typeof keyCheck> &
  OperationsIn<typeof audit> &
  OperationsIn<typeof operations> &
  OperationsIn<typeof system> &
  OperationsIn<typeof config>;

/** The operator API as `hono/client` types it (ui/lib/admin-client.ts). */
export type AdminApi = ApiOf<AdminOperations>;

/** Each definition by its name (the document's operationId). */
export const ADMIN_OPERATIONS: ReadonlyMap<string, AdminOperation> = new Map(
  AREAS.flatMap((area) =>
    Object.entries(area).filter((entry): entry is [string, AdminOperation] =>
      isAdminOperation(entry[1]),
    ),
  ),
);
