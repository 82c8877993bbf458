/**
 * `npm run deploy -- … --console-domain HOST --access-team TEAM --access-aud AUD
 * [--access-roles JSON]`: the operator console on its own hostname, behind
 * Cloudflare Access (docs/DEPLOY.md, "The console behind Cloudflare Access").
 * Writes into the gateway's [env.<env>.vars]: OPERATOR_API=binding and the
 * Access settings; into the console's [env.<env>]: its custom domain and the
 * Service Binding to the gateway's Worker for that environment.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { checkDomain } from './checks';
import { setTomlKey } from './toml';

export interface ConsoleDeploy {
  domain: string;
  accessTeam: string;
  accessAud: string;
  accessRoles?: string;
}

/** Everything wrong with the flags, before anything is written. */
export function consoleProblems(o: Partial<ConsoleDeploy>): string[] {
  const problems: string[] = [];
  const domainProblem = o.domain === undefined ? undefined : checkDomain(o.domain);
  if (domainProblem) problems.push(domainProblem.replace('--domain', '--console-domain'));
  if (!o.accessTeam || !/^[a-z0-9-]+\.cloudflareaccess\.com$/i.test(o.accessTeam)) {
    problems.push(
      '--access-team must be your Zero Trust team domain, e.g. myteam.cloudflareaccess.com',
    );
  }
  if (!o.accessAud || !/^[0-9a-f]{64}$/i.test(o.accessAud)) {
    problems.push(
      "--access-aud must be the Access application's Audience (AUD) tag: 64 hex digits",
    );
  }
  if (o.accessRoles !== undefined) {
    try {
      const roles = JSON.parse(o.accessRoles) as { admin?: unknown };
      if (!Array.isArray(roles.admin) || roles.admin.length === 0) throw new Error();
    } catch {
      problems.push(
        '--access-roles must be JSON with at least one admin: {"admin":["you@example.com"],"viewer":[]}',
      );
    }
  }
  return problems;
}

export function applyConsoleSettings(
  gatewayConfig: string,
  consoleConfig: string,
  env: string,
  gatewayWorker: string,
  o: ConsoleDeploy,
): void {
  const edit = (file: string, change: (text: string) => string) =>
    writeFileSync(file, change(readFileSync(file, 'utf8')));
  edit(gatewayConfig, (t) => {
    let out = setTomlKey(t, `env.${env}.vars`, 'OPERATOR_API', 'binding');
    out = setTomlKey(out, `env.${env}.vars`, 'ACCESS_TEAM_DOMAIN', o.accessTeam.toLowerCase());
    out = setTomlKey(out, `env.${env}.vars`, 'ACCESS_AUD', o.accessAud.toLowerCase());
    if (o.accessRoles !== undefined) {
      out = setTomlKey(
        out,
        `env.${env}.vars`,
        'ACCESS_ROLES',
        JSON.stringify(JSON.parse(o.accessRoles)),
      );
    }
    return out;
  });
  edit(consoleConfig, (t) => {
    const out = setTomlKey(t, `env.${env}`, 'routes', [
      { pattern: o.domain.toLowerCase(), custom_domain: true },
    ]);
    return setTomlKey(out, `env.${env}.services`, 'service', gatewayWorker, {
      where: { key: 'binding', value: 'GATEWAY' },
    });
  });
}

/** What the operator does in the Zero Trust dashboard (wrangler cannot make Access applications). */
export function accessSteps(o: ConsoleDeploy): string {
  return `Cloudflare Access, once (Zero Trust → Access → Applications → Add → Self-hosted):
  application domain ${o.domain} (the whole host; not the gateway's hostname),
  a policy allowing your operators; its Audience (AUD) tag is --access-aud.
  Roles: ACCESS_ROLES in [env.<env>.vars] (admin and viewer lists; docs/CONSOLE.md, "Roles").
  The console: https://${o.domain}/console/`;
}
