/**
 * Structured logs: one JSON object per line, `{level, event, ...fields}`, which
 * Workers Logs and `wrangler tail` index by field. Callers pass ids, names and
 * numbers, never a token, a platform key or a URL that may carry one.
 *
 * @example log.error('limiter.unavailable', { request_id, tenant_id })
 */
export type LogFields = Record<string, unknown>;

type Level = 'info' | 'warn' | 'error';

function write(level: Level, event: string, fields: LogFields): void {
  const line = JSON.stringify({ level, event, ...fields });
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
}

export const log = {
  info: (event: string, fields: LogFields = {}) => write('info', event, fields),
  warn: (event: string, fields: LogFields = {}) => write('warn', event, fields),
  error: (event: string, fields: LogFields = {}) => write('error', event, fields),
};
