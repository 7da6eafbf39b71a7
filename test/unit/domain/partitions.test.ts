import { describe, expect, it } from 'vitest'
import {
  addMonths,
  earliestAllocationNaming,
  isExpired,
  isPastQuoteRetention,
  LEDGER_TABLES,
  monthEnd,
  monthOf,
  monthOfPartition,
  monthsBetween,
  monthStart,
  monthsToCreate,
  partitionName,
  PARTITION_KEY,
  PARTITIONED_TABLES,
  QUOTE_DROP_GRACE_MS,
  type Retention,
} from '../../../src/domain/partitions.js'

const RETENTION: Retention = { quoteDays: 90, webhookAttemptDays: 30, taxReceiptDays: 30 }

describe('months of partitions', () => {
  it.each([
    [{ year: 2026, month: 11 }, 1, { year: 2026, month: 12 }],
    [{ year: 2026, month: 12 }, 1, { year: 2027, month: 1 }],
    [{ year: 2027, month: 1 }, -1, { year: 2026, month: 12 }],
    [{ year: 2026, month: 11 }, 15, { year: 2028, month: 2 }],
    [{ year: 2026, month: 3 }, -15, { year: 2024, month: 12 }],
  ])('%o plus %i months is %o', (from, n, expected) => {
    expect(addMonths(from, n)).toEqual(expected)
  })

  it('bounds a month by UTC instants, the end being the next month’s start', () => {
    expect(monthStart({ year: 2026, month: 12 }).toISOString()).toBe('2026-12-01T00:00:00.000Z')
    expect(monthEnd({ year: 2026, month: 12 }).toISOString()).toBe('2027-01-01T00:00:00.000Z')
    // The last millisecond of a month is in it; local time zones play no part.
    expect(monthOf(new Date('2026-11-30T23:59:59.999Z'))).toEqual({ year: 2026, month: 11 })
    expect(monthOf(new Date('2026-12-01T00:00:00.000Z'))).toEqual({ year: 2026, month: 12 })
  })

  it('names partitions and reads the month back from a name, and nothing from other names', () => {
    expect(partitionName('webhook_attempts', { year: 2027, month: 3 })).toBe('webhook_attempts_p2027_03')
    expect(monthOfPartition('quotes', 'quotes_p2027_03')).toEqual({ year: 2027, month: 3 })
    expect(monthOfPartition('quotes', 'quotes_default')).toBeUndefined()
    expect(monthOfPartition('quotes', 'quotes_p2027_13')).toBeUndefined()
    expect(monthOfPartition('quotes', 'retained_quotes')).toBeUndefined()
    expect(monthOfPartition('sessions', 'quotes_p2027_03')).toBeUndefined()
  })

  it('creates the current month and three ahead; lists months inclusively', () => {
    expect(monthsToCreate(new Date('2026-11-25T10:00:00Z'))).toEqual([
      { year: 2026, month: 11 },
      { year: 2026, month: 12 },
      { year: 2027, month: 1 },
      { year: 2027, month: 2 },
    ])
    expect(monthsBetween({ year: 2027, month: 2 }, { year: 2027, month: 1 })).toEqual([])
  })

  it.each([
    // A month expires once its end is the retention's days behind now; quotes a day later (QUOTE_DROP_GRACE_MS), so
    // that no allocation can still name one when the month's allocated quotes are copied.
    ['quotes', { year: 2026, month: 11 }, '2027-03-02T00:00:00Z', true],
    ['quotes', { year: 2026, month: 11 }, '2027-03-01T23:59:59Z', false],
    ['quotes', { year: 2026, month: 11 }, '2027-03-01T00:00:00Z', false],
    ['sessions', { year: 2026, month: 11 }, '2027-03-01T00:00:00Z', true],
    ['sessions', { year: 2026, month: 11 }, '2027-02-28T23:59:59Z', false],
    ['webhook_attempts', { year: 2026, month: 11 }, '2026-12-31T00:00:00Z', true],
    ['webhook_attempts', { year: 2026, month: 11 }, '2026-12-30T23:59:59Z', false],
    ['tax_receipts', { year: 2026, month: 11 }, '2026-12-31T00:00:00Z', true],
    // Never the current month, whatever the retention.
    ['webhook_attempts', { year: 2026, month: 12 }, '2026-12-31T00:00:00Z', false],
  ] as const)('%s of %o at %s: expired %s', (table, month, now, expired) => {
    expect(isExpired(table, month, new Date(now), RETENTION)).toBe(expired)
  })

  it.each([
    ['2026-11-01T00:00:00Z', '2027-01-29T23:59:59Z', false],
    ['2026-11-01T00:00:00Z', '2027-01-30T00:00:00Z', true],
    ['2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z', false],
  ] as const)('a quote made at %s is past 90 days of retention at %s: %s', (createdAt, now, past) => {
    expect(isPastQuoteRetention(new Date(createdAt), new Date(now), 90)).toBe(past)
  })

  it('never expires a month of the ledger, however old and however short the retention', () => {
    const short = { quoteDays: 1, webhookAttemptDays: 1, taxReceiptDays: 1 }
    expect([...LEDGER_TABLES].sort()).toEqual(
      ['allocation_reversals', 'allocations', 'impact_record_partners', 'webhook_deliveries', 'webhook_events'].sort(),
    )
    for (const table of LEDGER_TABLES) {
      expect(isExpired(table, { year: 2020, month: 1 }, new Date('2030-01-01T00:00:00Z'), short), table).toBe(false)
    }
    // Every partitioned table has its key; a reversal is kept in its own month.
    for (const table of PARTITIONED_TABLES) expect(PARTITION_KEY[table]).toMatch(/_(at|time)$/)
    expect(PARTITION_KEY.allocation_reversals).toBe('created_at')
  })

  it('never expires a month with a retention of a day before it has ended', () => {
    const short = { quoteDays: 1, webhookAttemptDays: 1, taxReceiptDays: 1 }
    expect(isExpired('quotes', { year: 2026, month: 11 }, new Date('2026-11-30T23:00:00Z'), short)).toBe(false)
    expect(isExpired('quotes', { year: 2026, month: 11 }, new Date('2026-12-02T23:59:59Z'), short)).toBe(false)
    expect(isExpired('quotes', { year: 2026, month: 11 }, new Date('2026-12-03T00:00:00Z'), short)).toBe(true)
    expect(isExpired('sessions', { year: 2026, month: 11 }, new Date('2026-12-02T00:00:00Z'), short)).toBe(true)
  })

  it('names the earliest time an allocation of a month’s quotes can have: its start, less the grace for clocks', () => {
    expect(earliestAllocationNaming({ year: 2026, month: 11 })).toEqual(new Date('2026-10-31T00:00:00Z'))
    // Every quote of the month is past its retention (so no longer allocated) a grace before its month is dropped.
    const last = new Date(monthEnd({ year: 2026, month: 11 }).getTime() - 1)
    const dropped = new Date('2027-03-02T00:00:00Z')
    expect(isExpired('quotes', { year: 2026, month: 11 }, dropped, RETENTION)).toBe(true)
    expect(isPastQuoteRetention(last, new Date(dropped.getTime() - QUOTE_DROP_GRACE_MS), RETENTION.quoteDays)).toBe(true)
  })
})
