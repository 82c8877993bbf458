/** Words for numbers and times, the same in the console and the portal. */

/** A length of time in the largest unit that keeps it readable: 45 s, 12 min, 21 h, 3 days. */
export function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

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
