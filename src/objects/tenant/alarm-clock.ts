/**
 * A TenantGuard's alarm, set no later than asked: its parts ask for it by a time
 * (TenantIo.wakeBy), often many times a second, so the time it is set for is kept
 * in memory and storage is asked only when it would move earlier.
 */
export class AlarmClock {
  /** When the alarm is set for, as far as this object knows (undefined: not known; null: none). */
  private alarmAt: number | null | undefined;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** Makes sure the alarm fires by `at` (real clock). */
  wakeBy(at: number): void {
    const wanted = Math.max(at, Date.now());
    if (this.alarmAt !== undefined && this.alarmAt !== null && this.alarmAt <= wanted) return;
    this.alarmAt = wanted;
    void this.storage
      .getAlarm()
      .then((current) =>
        current === null || current > wanted ? this.storage.setAlarm(wanted) : undefined,
      )
      .catch(() => {
        this.alarmAt = undefined;
      });
  }

  /** The alarm went off: none is set now. */
  rang(): void {
    this.alarmAt = null;
  }
}
