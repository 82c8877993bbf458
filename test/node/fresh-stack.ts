/**
 * The local stack (`npm start`'s gateway and emulator) for a Node test: on free
 * ports, quiet, with its own state directory emptied first, so runs start alike.
 */
import { rmSync } from 'node:fs';
import { freePort } from '../../scripts/free-port';
import { type Stack, type StackOptions, startStack } from '../../scripts/stack';

export async function freshStack(stateDir: string, vars?: StackOptions['vars']): Promise<Stack> {
  rmSync(stateDir, { recursive: true, force: true });
  return startStack({
    gatewayPort: await freePort(),
    emulatorPort: await freePort(),
    persistTo: stateDir,
    quiet: true,
    ...(vars ? { vars } : {}),
  });
}
