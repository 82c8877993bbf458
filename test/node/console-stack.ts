/**
 * What a console test in Chromium stands on: the platform emulator, the local Access
 * stand-in, the built gateway on plain workerd (scripts/workerd-host.ts) and Debian's
 * Chromium (playwright-core); the operator API with the admin token, a partner's call,
 * and a page signed in as the local admin.
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type LocalAccess, startLocalAccess } from '../../scripts/local-access';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';
import { operatorCall } from './operator-call';

export interface ConsoleStack {
  gateway: GatewayHost;
  access: LocalAccess;
  browser: Browser;
  /** The operator API with the admin token: the answer's data (throws on a refusal). */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** A tenant on the emulator's demo key (its name made unique), with its first token. */
  newTenant(
    name: string,
    key?: string,
    extra?: object,
  ): Promise<{ tenant_id: string; token: string; token_id: string }>;
  /** A partner's call with a gateway token. */
  asPartner(token: string, path?: string): Promise<Response>;
  /** A page signed in as the local admin, on `view` (a fragment such as `#tenants`). */
  signIn(
    view: string,
    options?: { width?: number; timezoneId?: string },
  ): Promise<{ page: Page; close(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function startConsoleStack(): Promise<ConsoleStack> {
  const emulator: RunningEmulator = await startEmulator({ port: 0 });
  const access = await startLocalAccess();
  const gateway = await startGateway({ platformBaseUrl: emulator.url, vars: access.vars });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const admin = <T>(method: string, path: string, body?: unknown) =>
    operatorCall<T>(gateway, method, path, body);
  return {
    gateway,
    access,
    browser,
    admin,
    newTenant: (name, key = DEMO_PLATFORM_KEY, extra = {}) =>
      admin('POST', '/tenants', {
        name: `${name} ${Date.now().toString(36)}`,
        platform_key: key,
        ...extra,
      }),
    asPartner: (token, path = '/team/lists') =>
      fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${token}` } }),
    async signIn(view, options = {}) {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: 900 },
        ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
      });
      const page = await context.newPage();
      await page.goto(access.loginUrl('admin', `${gateway.url}/console/${view}`));
      await page.getByTestId('whoami').waitFor();
      return { page, close: () => context.close() };
    },
    async stop() {
      await browser.close();
      await gateway.stop();
      await access.close();
      await emulator.close();
    },
  };
}

/**
 * The stack for a test file: started before its tests, stopped after them; its calls
 * reach the stack once started.
 */
export function consoleStackForTests() {
  let stack: ConsoleStack | undefined;
  beforeAll(async () => {
    stack = await startConsoleStack();
  }, 120_000);
  afterAll(() => stack?.stop());
  const started = () => {
    if (!stack) throw new Error('the console stack is not started yet');
    return stack;
  };
  return {
    started,
    admin: <T = any>(method: string, path: string, body?: unknown) =>
      started().admin<T>(method, path, body),
    newTenant: (name: string, key?: string, extra?: object) =>
      started().newTenant(name, key, extra),
    asPartner: (token: string, path?: string) => started().asPartner(token, path),
    signIn: (view: string, width?: number) => started().signIn(view, width ? { width } : {}),
  };
}
