/**
 * What the portal reads from the gateway (GET /token, GET /usage, POST /token/rotate): the
 * server's own wire types (src/types/wire.ts), so a change there breaks the portal's type check.
 */
/** OAuth consent and the partner's apps and keys (docs/OAUTH.md). */
export type {
  ConsentAnswer,
  ConsentView,
  CreatedPartnerKey,
  MeterState as Meter,
  OwnToken as Me,
  OwnUsage as Usage,
  PartnerApp,
  PartnerKey,
  PartnerKeys,
  RotatedToken as Rotated,
} from '../../src/types/wire';
