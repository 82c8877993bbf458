/** Starts the local Cloudflare Access stand-in (scripts/local-access.ts) for the Worker tests. */
import type { TestProject } from 'vitest/node';
import { LOCAL_ACCESS_AUD, LOCAL_ACCESS_ROLES, startLocalAccess } from '../../scripts/local-access';

export default async function setup(project: TestProject) {
  const access = await startLocalAccess();
  project.provide('localAccess', {
    url: access.url,
    aud: LOCAL_ACCESS_AUD,
    roles: JSON.stringify(LOCAL_ACCESS_ROLES),
  });
  return () => access.close();
}
