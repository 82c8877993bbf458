/**
 * The guard's reports to its tenant's fleet board (objects/fleet/fleet-board.ts):
 * once usage came in, the last two hours' figures, at most every FLEET_REPORT_MS and
 * FLEET_SETTLE_MS after the traffic at the soonest, from the alarm. What it holds is
 * memory only: a report that did not go is sent with the next alarm.
 */
import { HOUR_MS, hourOf } from '../../../metering/usage';
import type { FleetHour } from '../../fleet/fleet-board';
import type { TenantIo } from '../io';

/** A guard reports at most this often (and only after traffic). */
export const FLEET_REPORT_MS = 60_000;
/** A guard reports this long after the traffic it reports at the soonest. */
export const FLEET_SETTLE_MS = 5000;

export class FleetReport {
  /**
   * Usage came in since the last report. True at first: usage recorded before this
   * object last went away may not have been reported.
   */
  private due = true;
  /** The alarm is set for the next report. */
  private scheduled = false;
  private reportedAt = 0;

  constructor(
    private readonly io: Pick<TenantIo, 'tenantId' | 'now' | 'wakeBy' | 'reportToFleet'>,
    private readonly figures: (from: number) => FleetHour[],
  ) {}

  /** Usage came in: the fleet board hears of it within FLEET_REPORT_MS (from the alarm). */
  noteUsage(): void {
    this.due = true;
    if (this.scheduled) return;
    this.scheduled = true;
    // A few seconds' wait lets the batches of a burst go in one report.
    this.io.wakeBy(Math.max(this.io.now() + FLEET_SETTLE_MS, this.reportedAt + FLEET_REPORT_MS));
  }

  /**
   * Reports the tenant's last two hours when usage came in and the last report is
   * FLEET_REPORT_MS old; when the next report may go (else infinity).
   */
  async send(now: number): Promise<number> {
    const tenantId = this.io.tenantId;
    if (!this.due || !tenantId) return Number.POSITIVE_INFINITY;
    const next = this.reportedAt + FLEET_REPORT_MS;
    this.scheduled = true;
    if (now < next) return next;
    const hours = this.figures(hourOf(now) - HOUR_MS);
    // Taken before the call: usage coming in while it is on its way is due again, not lost.
    this.due = false;
    try {
      if (hours.length > 0) await this.io.reportToFleet(tenantId, hours, now);
      this.reportedAt = now;
      // Usage came in meanwhile: the alarm stays set for its report (scheduled too).
      if (this.due) return now + FLEET_REPORT_MS;
      this.scheduled = false;
      return Number.POSITIVE_INFINITY;
    } catch {
      // Given back, and tried again with the next alarm.
      this.due = true;
      return now + FLEET_REPORT_MS;
    }
  }
}
