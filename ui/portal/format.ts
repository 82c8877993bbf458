/** Words for numbers and times, as the portal shows them. */
export function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

export function when(iso: string | null): string {
  if (!iso) return 'never';
  const at = new Date(iso);
  const left = Math.round((at.getTime() - Date.now()) / 1000);
  const stamp = at
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
  return left > 0 ? `${stamp} (in ${duration(left)})` : `${stamp} (passed)`;
}

export const count = (n: number) => n.toLocaleString('en');
