/**
 * A length of time in words, for messages people read: the console, the portal, the
 * CLI and the gateway's own error messages ("retry in 1 h 55 min"). The API's fields
 * keep whole seconds (`retry_after_s`, `reset_s`); only the words are rounded.
 */

/** 45 s, 12 min, 1 h 55 min, 2 days 2 h: at most two units, the smaller one rounded. */
export function humanDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) return `${s} s`;
  if (s < 3570) return `${Math.round(s / 60)} min`;
  if (s < 172_800) {
    const minutes = Math.round(s / 60);
    const h = Math.floor(minutes / 60);
    const m = minutes % 60;
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  const hours = Math.round(s / 3600);
  const d = Math.floor(hours / 24);
  const h = hours % 24;
  return h ? `${d} days ${h} h` : `${d} days`;
}
