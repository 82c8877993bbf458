/**
 * The old name of operationId (observability/operation-id.ts), kept only for
 * src/proxy.ts and src/admin/index.ts, which other changes are editing now:
 * they move to operationId, then this file goes.
 */
export { operationId as named } from './operation-id';
