/**
 * Starts the platform emulator in Node for the whole test run, on the port
 * vitest.config.ts chose, and hands its seeded platform keys to the tests.
 */
import type { TestProject } from 'vitest/node';
import { DEMO_PLATFORM_KEY, DEMO_SECOND_KEY, OTHER_PLATFORM_KEY } from '../../emulator/seed';
import { startEmulator } from '../../emulator/server';

export default async function setup(project: TestProject) {
  const emulator = await startEmulator({ port: Number(process.env.EMULATOR_PORT) });
  project.provide('platformKeys', {
    demo: DEMO_PLATFORM_KEY,
    demoSecond: DEMO_SECOND_KEY,
    other: OTHER_PLATFORM_KEY,
  });
  return () => emulator.close();
}
