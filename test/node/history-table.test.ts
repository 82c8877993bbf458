/** The operator CLI's usage history table (`npm run admin -- usage TENANT --history 7d`). */
import { describe, expect, it } from 'vitest';
import { historyTable } from '../../scripts/admin/history-table';

const today = Date.parse('2026-11-22T00:00:00Z');

describe('historyTable', () => {
  it('prints one line per day, days without traffic included, with bars scaled to the busiest', () => {
    const table = historyTable(
      [
        { t: '2026-11-20T00:00:00.000Z', requests: 100, units: 120, p95_ms: 250 },
        { t: '2026-11-22T00:00:00.000Z', requests: 50, units: 50, p95_ms: null },
      ],
      today,
      3,
    );
    expect(table.split('\n')).toEqual([
      'day         requests     units  p95 ms',
      `2026-11-20       100       120      250  ${'█'.repeat(30)}`,
      '2026-11-21         0         0        -  ',
      `2026-11-22        50        50        -  ${'█'.repeat(15)}`,
      'total            150',
    ]);
  });
});
