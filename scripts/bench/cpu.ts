/**
 * CPU time per process, from Linux's /proc: how much CPU a Worker's workerd,
 * the emulator and the bench itself (its load generator, and Miniflare's
 * reader of workerd's log lines) spend per request. Unlike req/s on a shared
 * 2-core machine, this says where the time goes. Elsewhere than Linux every
 * reading is null and the bench prints "–".
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Length of a /proc clock tick in ms (USER_HZ, 100 almost everywhere). */
const TICK_MS = (() => {
  try {
    return 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return 10;
  }
})();

/** User + system CPU time a process has used so far, in ms; null when unknown. */
export function cpuMs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * TICK_MS : null;
  } catch {
    return null;
  }
}

/** The process that listens on 127.0.0.1:`port` (a workerd socket), or null. */
export function pidListeningOn(port: number): number | null {
  const inode = listeningInode(port);
  if (inode === null) return null;
  const socket = `socket:[${inode}]`;
  for (const pid of numericEntries('/proc')) {
    for (const fd of numericEntries(`/proc/${pid}/fd`)) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === socket) return pid;
      } catch {
        // The fd closed meanwhile.
      }
    }
  }
  return null;
}

function listeningInode(port: number): string | null {
  try {
    const portHex = port.toString(16).toUpperCase().padStart(4, '0');
    for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is IP:port in hex; state 0A is LISTEN; column 9 is the inode.
      if (cols[1] === `0100007F:${portHex}` && cols[3] === '0A') return cols[9] ?? null;
    }
  } catch {
    // No /proc: not Linux.
  }
  return null;
}

function numericEntries(dir: string): number[] {
  try {
    return readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}
