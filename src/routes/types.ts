import type { RouteGroup } from '../types/settings';

export type {
  CredentialHeader,
  HttpMethod,
  InputSchema,
  PlatformReader,
  ResolvedRoute,
  RouteSpec,
  UploadSpec,
} from '../types/routes';

/** Each built-in resource group once, in this order; scopes and limits are derived from them. */
const GROUPS: Record<RouteGroup, true> = {
  apikeys: true,
  calls: true,
  teams: true,
  agents: true,
  sessions: true,
  browsers: true,
  products: true,
  reports: true,
};
export const ROUTE_GROUPS: readonly RouteGroup[] = Object.keys(GROUPS) as RouteGroup[];
