/** Words for numbers and times, the same in the console and the portal. */
import { humanDuration } from '../../src/duration';

/** A length of time as the gateway's messages say it: 45 s, 12 min, 1 h 55 min, 2 days 2 h. */
export const duration = humanDuration;

/** An instant as UTC to the second, and how far it is from `now` ("in 7 min", "passed"). */
export function when(iso: string | null, now = Date.now()): string {
  if (!iso) return 'never';
  const at = new Date(iso);
  const left = Math.round((at.getTime() - now) / 1000);
  const stamp = at
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
  return left > 0 ? `${stamp} (in ${duration(left)})` : `${stamp} (passed)`;
}

/** An instant as UTC to the minute; a dash for none. */
export const fmtTime = (iso: string | null | undefined) =>
  iso ? `${new Date(iso).toISOString().replace('T', ' ').slice(0, 16)} UTC` : '—';

export const count = (n: number) => n.toLocaleString('en');

/** `n thing` or `n things` (a count with its noun, the count in digits with separators). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

interface MeterWindow {
  kind: 'rate' | 'quota';
  window_s: number;
  reset_s: number;
}

/**
 * A quota's period: the calendar day or month, UTC (its `window_s` of 30 days is only
 * nominal), and when it starts again ("Dec 1", "00:00 UTC"). Null for a rate policy.
 */
export function quotaPeriod(
  m: MeterWindow,
  now = Date.now(),
): { period: 'UTC day' | 'UTC month'; resets: string } | null {
  if (m.kind !== 'quota') return null;
  if (m.window_s <= 86_400) return { period: 'UTC day', resets: '00:00 UTC' };
  const next = new Date(now + m.reset_s * 1000);
  const day = next.toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  return { period: 'UTC month', resets: day };
}

/** A meter's window in words: a policy's length ("60 s"), or a quota's period and its reset. */
export function meterWindow(m: MeterWindow, now = Date.now()): string {
  const q = quotaPeriod(m, now);
  return q ? `${q.period}, resets ${q.resets}` : duration(m.window_s);
}

/** A `datetime-local` field's value (the browser's own time zone) as a UTC instant; '' for none. */
export const localToIso = (local: string) => (local ? new Date(local).toISOString() : '');

/** An instant (ms) as a `datetime-local` field's value, to the second, in the browser's zone. */
export function msToLocal(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
