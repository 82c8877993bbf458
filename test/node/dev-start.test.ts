/**
 * `npm start` in a terminal: the banner, then quiet (no line per request by default),
 * the banner again on Enter, and the operator CLI in another terminal following the
 * gateway's port without --url (issue 42, the walk's #15 and #19).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';

const run = promisify(execFile);
let child: ChildProcess | undefined;
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((resolve) => child?.once('exit', resolve));
  }
});

/** Every line the terminal shows, and a wait for the n-th line that matches. */
function watch(proc: ChildProcess) {
  const lines: string[] = [];
  const waiters: { test: RegExp; n: number; done: (i: number) => void }[] = [];
  const seen = (test: RegExp) => lines.filter((l) => test.test(l)).length;
  const check = () => {
    for (const w of [...waiters]) {
      if (seen(w.test) >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.done(lines.length);
      }
    }
  };
  for (const stream of [proc.stdout, proc.stderr]) {
    if (stream) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        check();
      });
    }
  }
  return {
    lines,
    /** Resolves with the number of lines so far once `test` has matched `n` lines. */
    until: (test: RegExp, n = 1) =>
      new Promise<number>((done) => {
        waiters.push({ test, n, done });
        check();
      }),
  };
}

describe('npm start', () => {
  it('stays quiet while requests come, shows the banner on Enter, and the CLI follows its port', async () => {
    const ports = {
      PORT: String(await freePort()),
      EMULATOR_PORT: String(await freePort()),
      DEMO_PORT: String(await freePort()),
      ACCESS_PORT: String(await freePort()),
    };
    const gateway = `http://127.0.0.1:${ports.PORT}`;
    // node itself (not the tsx wrapper), so a signal reaches npm start's own shutdown.
    child = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev.ts'], {
      env: { ...process.env, ...ports },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const terminal = watch(child);
    const END = /Enter shows this again/;
    const bannerEnd = await terminal.until(END);
    const banner = terminal.lines.join('\n');
    // Not the default port: the banner says how to reach it from elsewhere.
    expect(banner).toContain(`--url ${gateway}`);
    const token = /apgw_[0-9A-Za-z]{40,}/.exec(banner)?.[0] ?? '';
    expect(token).not.toBe('');

    // 150 requests, some refused (404, and 429 past the default burst): the terminal
    // prints no line for any of them.
    const call = (path: string) =>
      fetch(`${gateway}${path}`, { headers: { authorization: `Bearer ${token}` } });
    for (let round = 0; round < 15; round++) {
      const answers = await Promise.all([
        ...Array.from({ length: 9 }, () => call('/team/lists')),
        call('/no/such/route'),
      ]);
      for (const a of answers) expect([200, 404, 429]).toContain(a.status);
    }

    // The CLI, run from this directory with neither --url, GATEWAY_URL nor PORT, finds it.
    const env = { ...process.env };
    delete env.PORT;
    delete env.GATEWAY_URL;
    delete env.ADMIN_TOKEN;
    const listed = await run('tsx', ['scripts/admin.ts', 'tenant', 'list'], { env });
    expect(listed.stdout).toContain('Demo tenant');

    // Enter: the banner again; in between, nothing of the requests.
    child.stdin?.write('\n');
    const again = await terminal.until(END, 2);
    const between = terminal.lines.slice(bannerEnd, again);
    const printed = between.slice(
      0,
      between.findIndex((l) => /^\s+Gateway:/.test(l)),
    );
    expect(printed.filter((l) => /team\/lists|"event":"request"|no\/such/.test(l))).toEqual([]);
    expect(printed.filter((l) => l.trim()).length).toBeLessThanOrEqual(2);

    // Stopped, it leaves no note behind for the CLI to follow.
    expect(existsSync('.dev/local-gateway.json')).toBe(true);
    expect(JSON.parse(readFileSync('.dev/local-gateway.json', 'utf8')).url).toBe(gateway);
    child.kill('SIGTERM');
    await new Promise((resolve) => child?.once('exit', resolve));
    expect(existsSync('.dev/local-gateway.json')).toBe(false);
  }, 180_000);
});
