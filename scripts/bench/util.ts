/** Small helpers of the bench: the code version measured, number formatting. */
import { execFileSync } from 'node:child_process';

/** The commit measured, marked dirty when src/ or wrangler.toml differ from it. */
export function codeVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
    return (
      git('rev-parse', '--short', 'HEAD') +
      (git('status', '--porcelain', '--', 'src', 'wrangler.toml') ? '+dirty' : '')
    );
  } catch {
    return 'unknown';
  }
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** Three significant digits, so small ratios such as 0.0321 keep their precision. */
export function ratio(n: number): string {
  return Number.isFinite(n) ? String(Number(n.toPrecision(3))) : '–';
}

export function fmt(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '–';
}
