/**
 * What the guard holds beside the tenant's record, which every lease call answers
 * with: whether the tenant is refused (disabled or deleted), and its cache version
 * (docs/CACHE.md, "Cache versions and purging"), settings of the tenant-record part.
 * Each change returns what to push to the regional brokers.
 */
import type { BrokerPush } from '../../../metering/lease-protocol';
import type { SettingsView } from '../settings';

/** What the limits part reads. */
export type TenantStandingReader = Pick<TenantStanding, 'disabled' | 'cacheVersion'>;

export class TenantStanding {
  constructor(private readonly settings: SettingsView<'disabled' | 'cache_version'>) {}

  /** A disabled (or deleted) tenant is refused at once, whatever KV still says. */
  disabled(): boolean {
    return this.settings.get('disabled') === 'true';
  }

  setDisabled(disabled: boolean): BrokerPush {
    this.settings.put('disabled', String(disabled));
    return disabled ? { kind: 'disabled' } : { kind: 'reset' };
  }

  /** Part of every cache key of this tenant (null: none yet, read as `0`). */
  cacheVersion(): string | null {
    return this.settings.get('cache_version');
  }

  /** A new value orphans every old entry. */
  setCacheVersion(version: string): BrokerPush {
    this.settings.put('cache_version', version);
    return { kind: 'cache', version };
  }
}
