/**
 * The alerts beyond quotas (docs/OBSERVABILITY.md, "Alerts"), raised from a tenant's
 * hourly figures as the usage history keeps them (history/key-rejections.ts): the
 * platform refusing its key (401 or 403), and a share of server errors (alerts.ts).
 */

import { HOUR_MS, hourOf } from '../../../metering/usage';
import type { HistoryPart } from '../history/history-part';
import type { Sql } from '../sql';
import { type AlertConfig, DEFAULT_SERVER_ERROR_PERCENT, firstTime, raiseAlert } from './alerts';

/** What the alerts read of the usage history: an hour's figures, and the key's refusals in it. */
export type HourFigures = Pick<HistoryPart, 'figures' | 'keyRejectionsIn'>;

/** An hour needs this many requests before its share of server errors counts. */
export const SERVER_ERROR_MIN_REQUESTS = 20;

/**
 * Raises the alerts beyond quotas of the hours named (hour starts, ms: those a batch
 * brought failures for, which may be the hour before the one it came in), each once
 * an hour: the platform refused the key (once per status), and server errors other
 * than those refusals reached the configured share of the hour's requests (at least
 * SERVER_ERROR_MIN_REQUESTS). Raised without a webhook too: the console shows the
 * alert log. True when one waits for delivery.
 */
export function noteHealthAlerts(
  sql: Sql,
  history: HourFigures,
  tenantId: string,
  config: AlertConfig | null,
  hours: Iterable<number>,
  now: number,
): boolean {
  let raised = false;
  for (const hour of hours) {
    if (noteHour(sql, history, tenantId, config, hourOf(hour), now)) raised = true;
  }
  return raised && config !== null;
}

function noteHour(
  sql: Sql,
  history: HourFigures,
  tenantId: string,
  config: AlertConfig | null,
  hour: number,
  now: number,
): boolean {
  const period = {
    period_start: new Date(hour).toISOString(),
    period_end: new Date(hour + HOUR_MS).toISOString(),
    sent_at: new Date(now).toISOString(),
  };
  let raised = false;
  for (const r of history.keyRejectionsIn(hour)) {
    if (!firstTime(sql, 'platform_key', hour, r.status)) continue;
    raiseAlert(
      sql,
      config,
      {
        kind: 'platform_key_rejected',
        tenant_id: tenantId,
        upstream_status: r.status,
        count: r.count,
        ...period,
      },
      now,
    );
    raised = true;
  }
  const figures = history.figures(hour)[0];
  if (figures) {
    const threshold = config?.serverErrorPercent ?? DEFAULT_SERVER_ERROR_PERCENT;
    const errors = Math.max(0, figures.errors_5xx - figures.key_rejected);
    const share = figures.requests > 0 ? (100 * errors) / figures.requests : 0;
    if (
      figures.requests >= SERVER_ERROR_MIN_REQUESTS &&
      share >= threshold &&
      firstTime(sql, 'server_errors', hour, threshold)
    ) {
      raiseAlert(
        sql,
        config,
        {
          kind: 'server_errors',
          tenant_id: tenantId,
          threshold,
          share_percent: Math.round(share * 10) / 10,
          errors,
          requests: figures.requests,
          ...period,
        },
        now,
      );
      raised = true;
    }
  }
  return raised;
}
