/**
 * What a tenant's alerts use when its operator names nothing else (docs/OBSERVABILITY.md,
 * "Alerts"). Apart from alerts.ts so the operator API's definitions, which the console
 * type-checks against, can name them without the guard's code.
 */
export const DEFAULT_THRESHOLDS = [80, 100];
/** An hour whose server errors reach this share of its requests raises an alert (percent). */
export const DEFAULT_SERVER_ERROR_PERCENT = 10;
