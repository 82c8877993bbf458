/** Every key of the TENANTS KV namespace (docs/STORAGE.md), built in one place. */

/** `tenant:<id>`: the stored tenant; metadata is its listing row. */
export const tenantKey = (id: string) => `tenant:${id}`;

/** `token:<sha256>`: a token's record, under the hash of the token (never the token). */
export const tokenKey = (hash: string) => `token:${hash}`;

/**
 * `tenant-token:<tenant>:<token>`: index of a tenant's tokens; value the hash, metadata the record.
 */
export const tenantTokenKey = (tenantId: string, tokenId: string) =>
  `tenant-token:${tenantId}:${tokenId}`;

/** `key-tenants:<fingerprint>:<tenant>`: the tenants that share one platform key. */
export const keyTenantKey = (fingerprint: string, tenantId: string) =>
  `key-tenants:${fingerprint}:${tenantId}`;

/**
 * `cors-origin:<origin>:<tenant>`: the origins some tenant allows, so a
 * preflight can be answered without a token. Encoded, so that `http://a` is
 * not a prefix of `http://a:8080`.
 */
export const corsOriginKey = (origin: string, tenantId: string) =>
  `cors-origin:${encodeURIComponent(origin)}:${tenantId}`;

/** The last segment of a `prefix:…:<id>` key. */
export const lastSegment = (name: string) => name.slice(name.lastIndexOf(':') + 1);
