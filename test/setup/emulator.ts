/**
 * Starts the platform emulator in Node for the whole test run, on the port
 * vitest.config.ts chose, and hands its seeded platform keys and dashboard ids to the tests.
 */
import type { TestProject } from 'vitest/node';
import { opaqueIdFrom } from '../../emulator/dashboard-seed';
import { DEMO_PLATFORM_KEY, DEMO_SECOND_KEY, OTHER_PLATFORM_KEY } from '../../emulator/seed';
import { startEmulator } from '../../emulator/server';

export default async function setup(project: TestProject) {
  const emulator = await startEmulator({ port: Number(process.env.EMULATOR_PORT) });
  project.provide('platformKeys', {
    demo: DEMO_PLATFORM_KEY,
    demoSecond: DEMO_SECOND_KEY,
    other: OTHER_PLATFORM_KEY,
  });
  // The demo account's seeded dashboard (emulator/dashboard-seed.ts): ids no route lists.
  project.provide('demoDashboard', {
    productId: opaqueIdFrom('prod', 'demo:product:1'),
    reportId: opaqueIdFrom('rep', 'demo:report:1'),
    queryId: opaqueIdFrom('qry', 'demo:query:1'),
  });
  return () => emulator.close();
}
