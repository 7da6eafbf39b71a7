// The allocation summary's rules (docs/summary.md): what a groupBy counts, the time buckets of a window in a time zone,
// which rollup rows and which raw records make up each bucket, and exact per-currency totals in integer minor units.
import { DateTime, IANAZone } from 'luxon'
import { memo } from './memo.js'

export const SUMMARY_GROUP_BYS = ['day', 'week', 'month', 'impactPartner', 'project', 'organisation', 'currency'] as const
export type SummaryGroupBy = (typeof SUMMARY_GROUP_BYS)[number]
export type TimeGroupBy = 'day' | 'week' | 'month'

export const isTimeGroupBy = (groupBy: SummaryGroupBy): groupBy is TimeGroupBy =>
  groupBy === 'day' || groupBy === 'week' || groupBy === 'month'

/**
 * What a rollup row is keyed by besides its tree, organisation, period and currency. `total`: every line of a record
 * (one row per record set: counts are records). `partner`: the lines of one impact partner (a credit line under its
 * project's partner, a contribution line under its partner), counting the records that have such a line. `project`:
 * the credit lines of one project, counting the records that have one.
 */
export type RollupDimension = 'total' | 'partner' | 'project'
/**
 * UTC periods: weeks of 7 days, days, hours and quarter-hours (every boundary a multiple of the grain since the epoch,
 * so a rollup week runs from a Thursday: it is a unit of storage, never a bucket anybody asks for).
 */
export type RollupGrain = 'week' | 'day' | 'hour' | 'quarter'
/** Rows for the whole tree, or one per organisation. */
export type RollupScope = 'tree' | 'organisation'

export const GRAIN_MS: Readonly<Record<RollupGrain, number>> = { week: 604_800_000, day: 86_400_000, hour: 3_600_000, quarter: 900_000 }

/**
 * The grains kept for each dimension and scope, coarsest first. Weeks serve long windows of a tree (a year by partner
 * reads about 60 rows per partner instead of 365); days serve UTC summaries (one row per day per group);
 * hours serve time zones whose days start on a UTC hour and window edges; quarter-hours the :30 and :45 zones. Finer
 * grains are kept only where a summary needs them and they stay cheap: a time series of a tree reads `total` rows
 * (quarter-hours: 96 a day per currency); a partner or project summary has one bucket, so only its two edges are finer
 * than a day; an organisation's records are few, so its edges come from the records themselves.
 */
export const ROLLUP_GRAINS: Readonly<Record<RollupDimension, Readonly<Record<RollupScope, readonly RollupGrain[]>>>> = {
  total: { tree: ['week', 'day', 'hour', 'quarter'], organisation: ['day', 'hour'] },
  partner: { tree: ['week', 'day', 'hour'], organisation: ['day'] },
  project: { tree: ['week', 'day', 'hour'], organisation: ['day'] },
}

export function dimensionOf(groupBy: SummaryGroupBy): RollupDimension {
  if (groupBy === 'impactPartner') return 'partner'
  if (groupBy === 'project') return 'project'
  return 'total'
}

// Whether a zone is known is asked of Intl, which builds a formatter each time (a few hundred microseconds): once per name.
const knownZones = memo(512, (name) => (IANAZone.isValidZone(name) ? 'yes' : 'no'))

/**
 * True for an IANA time zone name the runtime knows ("Europe/London", "UTC", "Asia/Kathmandu"). Every IANA name starts
 * with a letter; the letter is checked first because newer runtimes' Intl also takes offsets ("+05:30": Node 24 does,
 * Node 20 does not), which are not names and would make the API's answer depend on the Node it runs on.
 */
export const isTimeZone = (name: string): boolean => name.length <= 64 && /^[A-Za-z]/.test(name) && knownZones(name) === 'yes'

/** A time bucket of a summary: [from, to) clipped to the window, keyed by the local date (or month) of its start. */
export interface TimeBucket {
  key: string
  from: Date
  to: Date
}

const STEP = { day: { days: 1 }, week: { weeks: 1 }, month: { months: 1 } } as const

/**
 * The buckets of [from, to) in a time zone: local days (23, 24 or 25 hours long), ISO weeks from Monday, or calendar
 * months, each keyed by the local date of its start ("2026-11-02"; a month "2026-11") and clipped to the window. A day
 * whose midnight does not exist (a DST change at 00:00) starts when the day does.
 */
export function timeBuckets(groupBy: TimeGroupBy, from: Date, to: Date, zone: string): readonly TimeBucket[] {
  return bucketsOf(`${groupBy} ${from.getTime()} ${to.getTime()} ${zone}`)
}

// A dashboard asks for the same windows again and again, and luxon's zone arithmetic costs tens of microseconds a step.
const bucketsOf = memo(256, (key) => {
  const [groupBy, from, to, zone] = key.split(' ') as [TimeGroupBy, string, string, string]
  return Object.freeze(computeTimeBuckets(groupBy, new Date(Number(from)), new Date(Number(to)), zone).map((b) => Object.freeze(b)))
})

function computeTimeBuckets(groupBy: TimeGroupBy, from: Date, to: Date, zone: string): TimeBucket[] {
  const buckets: TimeBucket[] = []
  const end = to.getTime()
  let start = DateTime.fromMillis(from.getTime(), { zone }).startOf(groupBy)
  while (start.toMillis() < end) {
    const next = start.plus(STEP[groupBy]).startOf(groupBy)
    if (next.toMillis() <= start.toMillis()) throw new RangeError(`time buckets do not advance in ${zone}`)
    buckets.push({
      key: groupBy === 'month' ? start.toFormat('yyyy-MM') : (start.toISODate() as string),
      from: new Date(Math.max(start.toMillis(), from.getTime())),
      to: new Date(Math.min(next.toMillis(), end)),
    })
    start = next
  }
  return buckets
}

/**
 * Where one part of a bucket comes from: rollup rows of one grain whose period_start is in [from, to), or the records
 * whose time is in [from, to).
 */
export interface SummaryPiece {
  bucket: number
  source: RollupGrain | 'records'
  from: Date
  to: Date
}

const floorTo = (t: number, size: number): number => t - (((t % size) + size) % size)

/**
 * Splits each bucket [from, to) into rollup pieces and record pieces. Rollup rows are complete before `rolledUntil`
 * (a row of a period that contains it holds the records of [period start, rolledUntil)), so: before it, whole periods
 * of the coarsest grain that fits, finer ones at the edges, and the records where no kept grain is aligned (a :30
 * zone's midnight, a window edge at 10:07); from it on, the records. Every instant of a bucket is in exactly one piece,
 * which is what makes a summary exact whatever the worker has done. Adjacent pieces of one source are merged.
 */
export function planPieces(
  buckets: readonly { from: Date; to: Date }[],
  rolledUntil: Date | null,
  grains: readonly RollupGrain[],
): SummaryPiece[] {
  const rolled = rolledUntil?.getTime() ?? Number.NEGATIVE_INFINITY
  const finest = GRAIN_MS[grains.at(-1) ?? 'day']
  const pieces: SummaryPiece[] = []
  const push = (bucket: number, source: SummaryPiece['source'], from: number, to: number) => {
    const last = pieces.at(-1)
    if (last && last.bucket === bucket && last.source === source && last.to.getTime() === from) last.to = new Date(to)
    else pieces.push({ bucket, source, from: new Date(from), to: new Date(to) })
  }
  buckets.forEach((bucket, index) => {
    const start = bucket.from.getTime()
    const end = bucket.to.getTime()
    const rolledEnd = Math.min(end, rolled)
    let at = start
    while (at < rolledEnd) {
      let taken = false
      for (const grain of grains) {
        const size = GRAIN_MS[grain]
        if (floorTo(at, size) !== at) continue
        if (at + size <= rolledEnd) {
          push(index, grain, at, at + size)
          at += size
          taken = true
          break
        }
        // The period reaches past rolledUntil, so its row holds [at, rolledUntil): usable when that ends inside the bucket.
        if (rolled <= end) {
          push(index, grain, at, rolled)
          at = rolled
          taken = true
          break
        }
      }
      if (!taken) {
        const next = Math.min(floorTo(at, finest) + finest, rolledEnd)
        push(index, 'records', at, next)
        at = next
      }
    }
    if (rolled < end) push(index, 'records', Math.max(start, rolled), end)
  })
  return pieces
}

/** The sums of one section's lines, in minor units of the currency. */
export interface SectionTotals {
  impact: bigint
  impactTax: bigint
  serviceFee: bigint
  serviceFeeTax: bigint
}

/**
 * What a summary says for one currency: records counted, and the sums of their lines net of reversals (a reversal
 * counts negatively at its own time). Tonnes are kept in grams (the lines record tonnes to 6 decimals).
 */
export interface CurrencyTotals {
  currencyCode: string
  allocations: number
  reversals: number
  credits: SectionTotals & { quantityGrams: bigint }
  contributions: SectionTotals
}

const zeroSection = (): SectionTotals => ({ impact: 0n, impactTax: 0n, serviceFee: 0n, serviceFeeTax: 0n })

export const zeroTotals = (currencyCode: string): CurrencyTotals => ({
  currencyCode,
  allocations: 0,
  reversals: 0,
  credits: { ...zeroSection(), quantityGrams: 0n },
  contributions: zeroSection(),
})

const addSection = (a: SectionTotals, b: SectionTotals): SectionTotals => ({
  impact: a.impact + b.impact,
  impactTax: a.impactTax + b.impactTax,
  serviceFee: a.serviceFee + b.serviceFee,
  serviceFeeTax: a.serviceFeeTax + b.serviceFeeTax,
})

/** a + b, for the same currency. */
export function addTotals(a: CurrencyTotals, b: CurrencyTotals): CurrencyTotals {
  if (a.currencyCode !== b.currencyCode) throw new RangeError(`cannot add ${a.currencyCode} to ${b.currencyCode}`)
  return {
    currencyCode: a.currencyCode,
    allocations: a.allocations + b.allocations,
    reversals: a.reversals + b.reversals,
    credits: { ...addSection(a.credits, b.credits), quantityGrams: a.credits.quantityGrams + b.credits.quantityGrams },
    contributions: addSection(a.contributions, b.contributions),
  }
}

/** sum += part, in place, for a sum no one else holds (sumByCurrency's own). */
function addInto(sum: CurrencyTotals, part: CurrencyTotals): void {
  if (sum.currencyCode !== part.currencyCode) throw new RangeError(`cannot add ${part.currencyCode} to ${sum.currencyCode}`)
  sum.allocations += part.allocations
  sum.reversals += part.reversals
  addSectionInto(sum.credits, part.credits)
  sum.credits.quantityGrams += part.credits.quantityGrams
  addSectionInto(sum.contributions, part.contributions)
}

function addSectionInto(sum: SectionTotals, part: SectionTotals): void {
  sum.impact += part.impact
  sum.impactTax += part.impactTax
  sum.serviceFee += part.serviceFee
  sum.serviceFeeTax += part.serviceFeeTax
}

/** impact + impactTax + serviceFee + serviceFeeTax. */
export const sectionTotal = (s: SectionTotals): bigint => s.impact + s.impactTax + s.serviceFee + s.serviceFeeTax

/** Per-currency totals of several parts, one entry per currency, in currency-code order. Never across currencies. */
export function sumByCurrency(parts: Iterable<CurrencyTotals>): CurrencyTotals[] {
  const byCurrency = new Map<string, CurrencyTotals>()
  // Sums this call made, added to in place: a year by day adds hundreds of parts, one new object each otherwise.
  const own = new Set<CurrencyTotals>()
  for (const part of parts) {
    const sum = byCurrency.get(part.currencyCode)
    if (sum === undefined) byCurrency.set(part.currencyCode, part)
    else if (own.has(sum)) addInto(sum, part)
    else {
      const total = addTotals(sum, part)
      own.add(total)
      byCurrency.set(part.currencyCode, total)
    }
  }
  return [...byCurrency.values()].sort((a, b) => (a.currencyCode < b.currencyCode ? -1 : a.currencyCode > b.currencyCode ? 1 : 0))
}
