/** The operator API's bounds for a tenant (src/admin/tenants.contract.ts), checked in the browser first. */

export function tenantNameProblem(name: string): string | null {
  if (!name.trim()) return 'Give the tenant a name';
  if (name.length > 100) return 'At most 100 characters';
  return null;
}

export function platformKeyProblem(key: string): string | null {
  if (key.length < 8 || key.length > 512) return 'The key has 8 to 512 characters';
  if (!/^[\x21-\x7E]+$/.test(key)) return 'Printable ASCII without spaces';
  return null;
}

export const parseOrigins = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((o) => o.trim())
    .filter(Boolean);

export function originsProblem(origins: string[]): string | null {
  if (origins.length > 20) return 'At most 20 origins';
  const bad = origins.find((o) => !/^https?:\/\/[^/\s]+$/.test(o));
  return bad ? `${bad} is not an origin (scheme://host[:port])` : null;
}
