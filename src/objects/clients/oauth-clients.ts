/**
 * The OAuth clients registered with the gateway (docs/OAUTH.md, "Clients"): one
 * SQLite-backed Durable Object named "global". A client registers before any tenant is
 * known (RFC 7591, or an operator's `POST /admin/oauth/clients`), so its home is the
 * fleet's, not a tenant's; which tenant it may reach is decided at consent, by the partner
 * who approves it and by that tenant's settings.
 *
 * Bounded: at most OAUTH_CLIENTS_MAX clients at once (a registration past it is refused),
 * and the alarm removes dynamically registered clients no partner approved within
 * UNAPPROVED_KEPT_MS, or unused for IDLE_KEPT_MS, so a slow flood of registrations
 * cannot fill the book for good. An operator's clients stay until the operator removes them.
 */
import { DurableObject } from 'cloudflare:workers';
import { randomBase62 } from '../../tenants/token';
import type { OAuthClient } from '../../types/wire';
import { openTables } from '../tables';

/** A dynamically registered client no partner approved is removed after a day. */
export const UNAPPROVED_KEPT_MS = 86_400_000;
/** A client with no consent, exchange or refresh for 90 days is removed. */
export const IDLE_KEPT_MS = 90 * 86_400_000;
/** `last_used_at` is written at most this often per client (it is for sweeping, not a log). */
const TOUCH_EVERY_MS = 3_600_000;
const SWEEP_EVERY_MS = 3_600_000;

/** The one book of clients. */
export function oauthClients(env: { OAUTH_CLIENTS: DurableObjectNamespace<OAuthClients> }) {
  return env.OAUTH_CLIENTS.get(env.OAUTH_CLIENTS.idFromName('global'));
}

/** What a registration asks for, checked by the isolate (oauth/register.ts). */
export interface ClientRequest {
  client_name: string;
  redirect_uris: string[];
  kind: OAuthClient['kind'];
  /** The operator who registered it, for `operator` clients. */
  created_by: string | null;
}

export type Registered = { kind: 'registered'; client: OAuthClient } | { kind: 'full' };

interface Row extends Record<string, SqlStorageValue> {
  client_id: string;
  client_name: string;
  redirect_uris: string;
  kind: string;
  created_by: string | null;
  created_at: number;
  last_used_at: number | null;
  approved: number;
}

const fromRow = (r: Row): OAuthClient => ({
  client_id: r.client_id,
  client_name: r.client_name,
  redirect_uris: JSON.parse(r.redirect_uris) as string[],
  kind: r.kind === 'operator' ? 'operator' : 'dynamic',
  created_by: r.created_by,
  created_at: new Date(r.created_at).toISOString(),
  last_used_at: r.last_used_at === null ? null : new Date(r.last_used_at).toISOString(),
  approved: r.approved === 1,
});

/** The tables, made where missing at every start. */
const TABLES = `
  CREATE TABLE IF NOT EXISTS clients (
    client_id TEXT PRIMARY KEY, client_name TEXT NOT NULL, redirect_uris TEXT NOT NULL,
    kind TEXT NOT NULL, created_by TEXT, created_at INTEGER NOT NULL,
    last_used_at INTEGER, approved INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS clients_by_created ON clients (created_at);
`;

export class OAuthClients extends DurableObject {
  private readonly sql = openTables(this.ctx, TABLES);

  /** A new client, unless `max` are registered already. */
  async register(request: ClientRequest, max: number, now: number): Promise<Registered> {
    const { n } = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM clients').one();
    if (n >= max) return { kind: 'full' };
    const clientId = `cli_${randomBase62(22)}`;
    this.sql.exec(
      `INSERT INTO clients (client_id, client_name, redirect_uris, kind, created_by, created_at,
         approved) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      clientId,
      request.client_name,
      JSON.stringify(request.redirect_uris),
      request.kind,
      request.created_by,
      now,
      request.kind === 'operator' ? 1 : 0,
    );
    await this.sweepLater(now);
    return { kind: 'registered', client: this.client(clientId) as OAuthClient };
  }

  client(clientId: string): OAuthClient | null {
    const row = this.sql.exec<Row>('SELECT * FROM clients WHERE client_id = ?', clientId);
    const found = row.toArray()[0];
    return found ? fromRow(found) : null;
  }

  /**
   * The client, noted as used now (a consent, an exchange, a refresh), and as approved
   * when a partner approved it; null when there is no such client.
   */
  use(clientId: string, now: number, approved: boolean): OAuthClient | null {
    const client = this.client(clientId);
    if (!client) return null;
    const last = client.last_used_at ? Date.parse(client.last_used_at) : 0;
    if ((approved && !client.approved) || now - last >= TOUCH_EVERY_MS) {
      this.sql.exec(
        'UPDATE clients SET last_used_at = ?, approved = MAX(approved, ?) WHERE client_id = ?',
        now,
        approved ? 1 : 0,
        clientId,
      );
      return this.client(clientId);
    }
    return client;
  }

  /** A page of clients, newest first, after `cursor` (a client id). */
  list(limit: number, cursor: string | null): { clients: OAuthClient[]; cursor: string | null } {
    const rows = this.sql
      .exec<Row>(
        `SELECT * FROM clients WHERE ? IS NULL OR (created_at, client_id) <
           (SELECT created_at, client_id FROM clients WHERE client_id = ?)
         ORDER BY created_at DESC, client_id DESC LIMIT ?`,
        cursor,
        cursor,
        limit + 1,
      )
      .toArray();
    const page = rows.slice(0, limit).map(fromRow);
    return { clients: page, cursor: rows.length > limit ? (page.at(-1)?.client_id ?? null) : null };
  }

  /** Removes a client: its grants can no longer be refreshed, nor new ones made. */
  remove(clientId: string): boolean {
    return this.sql.exec('DELETE FROM clients WHERE client_id = ?', clientId).rowsWritten > 0;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    this.sql.exec(
      `DELETE FROM clients WHERE kind = 'dynamic' AND ((approved = 0 AND created_at < ?)
         OR COALESCE(last_used_at, created_at) < ?)`,
      now - UNAPPROVED_KEPT_MS,
      now - IDLE_KEPT_MS,
    );
    const { n } = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM clients').one();
    if (n > 0) await this.ctx.storage.setAlarm(now + SWEEP_EVERY_MS);
  }

  private async sweepLater(now: number): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(now + SWEEP_EVERY_MS);
    }
  }
}
