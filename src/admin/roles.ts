/**
 * Operator roles from an Access identity through ACCESS_ROLES: `admin` may
 * change things, `viewer` may only read. An entry is an exact email, a whole
 * domain (`*@example.com`) or an Access group (`group:<name>`); admin wins
 * when both lists match (docs/CONSOLE.md, "Roles").
 */
import type { AccessRoles, OperatorRole } from '../types/settings';
import type { AccessIdentity } from './access';

export function roleOf(identity: AccessIdentity, roles: AccessRoles): OperatorRole | null {
  if (roles.admin.some((entry) => matches(entry, identity))) return 'admin';
  if (roles.viewer.some((entry) => matches(entry, identity))) return 'viewer';
  return null;
}

function matches(entry: string, identity: AccessIdentity): boolean {
  const wanted = entry.trim();
  if (wanted.startsWith('group:')) return identity.groups.includes(wanted.slice('group:'.length));
  const lower = wanted.toLowerCase();
  if (lower.startsWith('*@')) return identity.email.endsWith(lower.slice(1));
  return identity.email === lower;
}
