import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  addTotals,
  GRAIN_MS,
  isTimeZone,
  planPieces,
  ROLLUP_GRAINS,
  sumByCurrency,
  timeBuckets,
  zeroTotals,
  type RollupGrain,
  type SummaryPiece,
} from '../../../src/domain/summary.js'

const d = (iso: string) => new Date(iso)
const bucketsOf = (...args: Parameters<typeof timeBuckets>) =>
  timeBuckets(...args).map((b) => [b.key, b.from.toISOString(), b.to.toISOString()])

describe('timeBuckets', () => {
  it.each([
    // zone, window, expected [key, from, to] (UTC instants)
    [
      'UTC: whole days',
      'UTC',
      '2026-11-02T00:00:00Z',
      '2026-11-04T00:00:00Z',
      [
        ['2026-11-02', '2026-11-02T00:00:00.000Z', '2026-11-03T00:00:00.000Z'],
        ['2026-11-03', '2026-11-03T00:00:00.000Z', '2026-11-04T00:00:00.000Z'],
      ],
    ],
    [
      'London, spring forward: 23 hours',
      'Europe/London',
      '2026-03-29T00:00:00Z',
      '2026-03-30T00:00:00Z',
      [
        ['2026-03-29', '2026-03-29T00:00:00.000Z', '2026-03-29T23:00:00.000Z'],
        ['2026-03-30', '2026-03-29T23:00:00.000Z', '2026-03-30T00:00:00.000Z'],
      ],
    ],
    [
      'New York, fall back: 25 hours',
      'America/New_York',
      '2026-11-01T04:00:00Z',
      '2026-11-02T05:00:00Z',
      [['2026-11-01', '2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z']],
    ],
    [
      'Kolkata (+05:30): days start at 18:30 UTC; a window inside a day is one clipped bucket',
      'Asia/Kolkata',
      '2026-11-02T20:00:00Z',
      '2026-11-02T21:00:00Z',
      [['2026-11-03', '2026-11-02T20:00:00.000Z', '2026-11-02T21:00:00.000Z']],
    ],
    [
      'Kathmandu (+05:45)',
      'Asia/Kathmandu',
      '2026-11-01T18:15:00Z',
      '2026-11-02T18:15:00Z',
      [['2026-11-02', '2026-11-01T18:15:00.000Z', '2026-11-02T18:15:00.000Z']],
    ],
    [
      'Lord Howe: a DST change of 30 minutes (23.5-hour day)',
      'Australia/Lord_Howe',
      '2026-10-03T13:30:00Z',
      '2026-10-04T13:00:00Z',
      [['2026-10-04', '2026-10-03T13:30:00.000Z', '2026-10-04T13:00:00.000Z']],
    ],
    [
      'Santiago: midnight does not exist on 6 September 2026, the day starts at 01:00',
      'America/Santiago',
      '2026-09-05T04:00:00Z',
      '2026-09-07T03:00:00Z',
      [
        ['2026-09-05', '2026-09-05T04:00:00.000Z', '2026-09-06T04:00:00.000Z'],
        ['2026-09-06', '2026-09-06T04:00:00.000Z', '2026-09-07T03:00:00.000Z'],
      ],
    ],
  ])('days: %s', (_name, zone, from, to, expected) => {
    expect(bucketsOf('day', d(from), d(to), zone)).toEqual(expected)
  })

  it('weeks are ISO weeks from Monday, keyed by their Monday, clipped to the window', () => {
    expect(bucketsOf('week', d('2026-11-04T12:00:00Z'), d('2026-11-17T00:00:00Z'), 'UTC')).toEqual([
      ['2026-11-02', '2026-11-04T12:00:00.000Z', '2026-11-09T00:00:00.000Z'],
      ['2026-11-09', '2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z'],
      ['2026-11-16', '2026-11-16T00:00:00.000Z', '2026-11-17T00:00:00.000Z'],
    ])
    // A week that holds a DST change is 167 hours long.
    const [week] = timeBuckets('week', d('2026-03-23T00:00:00Z'), d('2026-03-29T23:00:00Z'), 'Europe/London')
    expect(week && (week.to.getTime() - week.from.getTime()) / 3_600_000).toBe(167)
  })

  it('months are keyed YYYY-MM in the zone', () => {
    expect(bucketsOf('month', d('2026-01-31T23:30:00Z'), d('2026-03-01T00:00:00Z'), 'Europe/Paris')).toEqual([
      ['2026-02', '2026-01-31T23:30:00.000Z', '2026-02-28T23:00:00.000Z'],
      ['2026-03', '2026-02-28T23:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ])
  })

  it('tiles any window exactly, in order, for every zone', () => {
    const zones = [
      'UTC',
      'Europe/London',
      'America/New_York',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'Australia/Lord_Howe',
      'America/Santiago',
      'Pacific/Chatham',
    ]
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2028, 0, 1) }),
        fc.integer({ min: 1, max: 60 * 86_400_000 }),
        fc.constantFrom(...zones),
        fc.constantFrom('day' as const, 'week' as const, 'month' as const),
        (from, length, zone, groupBy) => {
          const buckets = timeBuckets(groupBy, new Date(from), new Date(from + length), zone)
          expect(buckets[0]?.from.getTime()).toBe(from)
          expect(buckets.at(-1)?.to.getTime()).toBe(from + length)
          for (let i = 1; i < buckets.length; i++) {
            expect(buckets[i]?.from.getTime()).toBe(buckets[i - 1]?.to.getTime())
            expect((buckets[i]?.key ?? '') > (buckets[i - 1]?.key ?? '')).toBe(true)
          }
          for (const b of buckets) expect(b.to.getTime()).toBeGreaterThan(b.from.getTime())
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('isTimeZone', () => {
  it.each([
    ['UTC', true],
    ['Europe/London', true],
    ['Asia/Kathmandu', true],
    ['Mars/Olympus_Mons', false],
    ['', false],
    ['+05:30', false],
    ['-08:00', false],
    ['+0530', false],
    ['Etc/GMT+5', true],
    ['x'.repeat(65), false],
  ])('%s → %s', (name, valid) => expect(isTimeZone(name)).toBe(valid))
})

const show = (pieces: SummaryPiece[]) => pieces.map((p) => [p.bucket, p.source, p.from.toISOString(), p.to.toISOString()])

describe('planPieces', () => {
  const total = ROLLUP_GRAINS.total.tree

  it('reads the records only, when nothing is rolled up', () => {
    expect(show(planPieces([{ from: d('2026-01-01T00:00:00Z'), to: d('2026-01-03T00:00:00Z') }], null, total))).toEqual([
      [0, 'records', '2026-01-01T00:00:00.000Z', '2026-01-03T00:00:00.000Z'],
    ])
  })

  it('reads whole UTC days from day rows, the edges from hours, quarters and records, and the rest from the records', () => {
    const rolled = d('2026-01-05T13:37:00Z')
    expect(show(planPieces([{ from: d('2026-01-01T22:10:00Z'), to: d('2026-01-06T00:00:00Z') }], rolled, total))).toEqual([
      [0, 'records', '2026-01-01T22:10:00.000Z', '2026-01-01T22:15:00.000Z'],
      [0, 'quarter', '2026-01-01T22:15:00.000Z', '2026-01-01T23:00:00.000Z'],
      [0, 'hour', '2026-01-01T23:00:00.000Z', '2026-01-02T00:00:00.000Z'],
      // The day of rolled_until: its row holds [00:00, 13:37) exactly.
      [0, 'day', '2026-01-02T00:00:00.000Z', '2026-01-05T13:37:00.000Z'],
      [0, 'records', '2026-01-05T13:37:00.000Z', '2026-01-06T00:00:00.000Z'],
    ])
  })

  it('never uses a row that reaches past both the bucket and rolled_until', () => {
    // Rolled far ahead; the bucket ends at 10:30, so the day and the hour 10:00 are too long: a quarter, then records.
    expect(
      show(planPieces([{ from: d('2026-01-02T09:00:00Z'), to: d('2026-01-02T10:40:00Z') }], d('2026-02-01T00:00:00Z'), total)),
    ).toEqual([
      [0, 'hour', '2026-01-02T09:00:00.000Z', '2026-01-02T10:00:00.000Z'],
      [0, 'quarter', '2026-01-02T10:00:00.000Z', '2026-01-02T10:30:00.000Z'],
      [0, 'records', '2026-01-02T10:30:00.000Z', '2026-01-02T10:40:00.000Z'],
    ])
  })

  it('a year by partner reads rollup weeks (from a Thursday), days and hours at its edges', () => {
    const pieces = planPieces(
      [{ from: d('2025-01-01T00:00:00Z'), to: d('2026-01-01T00:00:00Z') }],
      d('2026-06-01T00:00:00Z'),
      ROLLUP_GRAINS.partner.tree,
    )
    // 2025-01-01 is a Wednesday: its day, then the 52 weeks from Thursday 2025-01-02 (one range of week rows).
    expect(show(pieces)).toEqual([
      [0, 'day', '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z'],
      [0, 'week', '2025-01-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
    ])
    // A window ending mid-week: the last whole week, then days, then hours.
    expect(
      show(
        planPieces(
          [{ from: d('2025-01-02T00:00:00Z'), to: d('2025-01-19T06:00:00Z') }],
          d('2026-06-01T00:00:00Z'),
          ROLLUP_GRAINS.partner.tree,
        ),
      ),
    ).toEqual([
      [0, 'week', '2025-01-02T00:00:00.000Z', '2025-01-16T00:00:00.000Z'],
      [0, 'day', '2025-01-16T00:00:00.000Z', '2025-01-19T00:00:00.000Z'],
      [0, 'hour', '2025-01-19T00:00:00.000Z', '2025-01-19T06:00:00.000Z'],
    ])
  })

  it('London days read 24 hour rows of UTC; a UTC day one row', () => {
    const buckets = timeBuckets('day', d('2026-06-01T23:00:00Z'), d('2026-06-03T23:00:00Z'), 'Europe/London')
    expect(show(planPieces(buckets, d('2027-01-01T00:00:00Z'), total))).toEqual([
      [0, 'hour', '2026-06-01T23:00:00.000Z', '2026-06-02T23:00:00.000Z'],
      [1, 'hour', '2026-06-02T23:00:00.000Z', '2026-06-03T23:00:00.000Z'],
    ])
    expect(
      show(planPieces([{ from: d('2026-06-02T00:00:00Z'), to: d('2026-06-03T00:00:00Z') }], d('2027-01-01T00:00:00Z'), total)),
    ).toEqual([[0, 'day', '2026-06-02T00:00:00.000Z', '2026-06-03T00:00:00.000Z']])
  })

  it('every instant of every bucket is in exactly one piece, each rollup piece aligned to its grain and before rolled_until', () => {
    const grainSets: (readonly RollupGrain[])[] = [
      ROLLUP_GRAINS.total.tree,
      ROLLUP_GRAINS.total.organisation,
      ROLLUP_GRAINS.partner.tree,
      ROLLUP_GRAINS.partner.organisation,
    ]
    fc.assert(
      fc.property(
        // Buckets from a millisecond to 40 days: weeks, days, hours and quarter-hours all fit some of them.
        fc.array(fc.integer({ min: 1, max: 40 * 86_400_000 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2026, 0, 1) }),
        fc.option(fc.integer({ min: Date.UTC(2024, 11, 1), max: Date.UTC(2026, 2, 1) }), { nil: null }),
        fc.constantFrom(...grainSets),
        fc.boolean(),
        (lengths, start, rolled, grains, aligned) => {
          // Boundaries on minutes (like local midnights) or anywhere (like window edges).
          let at = aligned ? start - (start % 60_000) : start
          const buckets = lengths.map((length) => {
            const bucket = { from: new Date(at), to: new Date(at + length) }
            at += length
            return bucket
          })
          const pieces = planPieces(buckets, rolled === null ? null : new Date(rolled), grains)
          buckets.forEach((bucket, index) => {
            const own = pieces.filter((p) => p.bucket === index)
            expect(own[0]?.from.getTime()).toBe(bucket.from.getTime())
            expect(own.at(-1)?.to.getTime()).toBe(bucket.to.getTime())
            own.forEach((p, i) => {
              expect(p.to.getTime()).toBeGreaterThan(p.from.getTime())
              if (i > 0) expect(p.from.getTime()).toBe(own[i - 1]?.to.getTime())
              if (p.source === 'records') return
              expect(grains).toContain(p.source)
              const size = GRAIN_MS[p.source]
              expect(rolled).not.toBeNull()
              expect(p.from.getTime() % size).toBe(0)
              // Whole periods, or the periods up to rolled_until, whose rows hold [start, rolled_until).
              expect(p.to.getTime() % size === 0 || p.to.getTime() === rolled).toBe(true)
              expect(p.to.getTime()).toBeLessThanOrEqual(rolled as number)
            })
          })
        },
      ),
      { numRuns: 500 },
    )
  })
})

describe('totals', () => {
  const some = (currencyCode: string, n: bigint) => ({
    currencyCode,
    allocations: 1,
    reversals: 0,
    credits: { impact: n, impactTax: 1n, serviceFee: 2n, serviceFeeTax: 3n, quantityGrams: 50n },
    contributions: { impact: -n, impactTax: 0n, serviceFee: 0n, serviceFeeTax: 0n },
  })

  it('adds exactly, per currency, and never across currencies', () => {
    expect(addTotals(some('GBP', 10n), some('GBP', 2n))).toMatchObject({
      allocations: 2,
      credits: { impact: 12n, quantityGrams: 100n },
      contributions: { impact: -12n },
    })
    expect(() => addTotals(some('GBP', 1n), some('EUR', 1n))).toThrow(RangeError)
    expect(
      sumByCurrency([some('JPY', 5n), some('EUR', 1n), zeroTotals('JPY'), some('EUR', 2n)]).map((t) => [t.currencyCode, t.credits.impact]),
    ).toEqual([
      ['EUR', 3n],
      ['JPY', 5n],
    ])
  })

  it('sums of minor units are exact beyond 2^53', () => {
    const big = 2n ** 60n
    expect(addTotals(some('GBP', big), some('GBP', 1n)).credits.impact).toBe(big + 1n)
  })
})
