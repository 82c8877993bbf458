/** The built-in resource groups: scopes, group quotas and OpenAPI tags are derived from them. */
import type { OperationGroup } from '../types/settings';

/** Each built-in resource group once, in this order. */
const GROUPS: Record<OperationGroup, true> = {
  apikeys: true,
  calls: true,
  teams: true,
  agents: true,
  sessions: true,
  browsers: true,
  products: true,
  reports: true,
};
export const OPERATION_GROUPS: readonly OperationGroup[] = Object.keys(GROUPS) as OperationGroup[];
