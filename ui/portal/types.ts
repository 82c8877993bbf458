/**
 * What the portal reads from the gateway (GET /token, GET /usage, POST /token/rotate): the
 * server's own wire types (src/types/wire.ts), so a change there breaks the portal's type check.
 */
export type {
  MeterState as Meter,
  OwnToken as Me,
  OwnUsage as Usage,
  RotatedToken as Rotated,
} from '../../src/types/wire';
