/**
 * A page of a tenant's recent requests as the operator API and a tenant's own view
 * answer it: each refused or failed request with its reason, in words
 * (docs/OBSERVABILITY.md, "Recent requests").
 */
import { ERRORS } from '../errors';
import {
  RECENT_HOURS,
  RECENT_KEPT,
  type RecentCursor,
} from '../objects/tenant/recent/recent-requests-part';
import type { RecentRequest, RecentRequestPage } from '../types/wire';

const byCode = new Map<number, string>(Object.values(ERRORS).map((e) => [e.code, e.msg]));

/** Why a request was refused or failed, in words; null for a success. */
export function reasonOf(r: Omit<RecentRequest, 'reason'>): string | null {
  if (r.status < 400) return null;
  const said = r.code === null ? undefined : byCode.get(r.code);
  if (said) {
    const policy = r.policy ? ` (policy ${r.policy})` : '';
    const platform = r.upstream_status ? `; the platform answered HTTP ${r.upstream_status}` : '';
    return `${said}${policy}${platform}`;
  }
  if (r.code !== null) return `The platform answered code ${r.code} (HTTP ${r.status})`;
  return `HTTP ${r.status}`;
}

/** A page as the API answers it: each request with its reason, the cursor as text. */
export function recentPage(page: {
  requests: Omit<RecentRequest, 'reason'>[];
  cursor: RecentCursor | null;
}): RecentRequestPage {
  return {
    requests: page.requests.map((r) => ({ ...r, reason: reasonOf(r) })),
    cursor: page.cursor === null ? null : `${page.cursor.at}-${page.cursor.seq}`,
    kept: { per_kind: RECENT_KEPT, hours: RECENT_HOURS },
  };
}
