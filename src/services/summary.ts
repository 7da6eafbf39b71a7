// The allocation summary (docs/summary.md): per-currency totals of the impact records of a window, grouped by time
// bucket, impact partner, project, organisation or currency. The same records as the reconciliation list (its window,
// tree and 403 rules), read from rollups for what the worker has rolled up and from the records for the rest, in one
// snapshot, so the figures are exact at every moment.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import {
  findRolledUntil,
  findTreeOrganisationIds,
  readSummaries,
  type GroupLabel,
  type SummaryRead,
  type SummaryRow,
} from '../db/repositories/allocation-rollups.js'
import {
  dimensionOf,
  isTimeGroupBy,
  planPieces,
  ROLLUP_GRAINS,
  sumByCurrency,
  timeBuckets,
  zeroTotals,
  type CurrencyTotals,
  type SummaryGroupBy,
} from '../domain/summary.js'
import type { AccessResolver, Principal } from './access.js'
import { filterOf } from './reconciliation.js'

export interface SummaryDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
}

/** The query (schema-checked: ISO date-times, a uuid, a known groupBy, a known IANA time zone). */
export interface SummaryQuery {
  dateTimeFrom: string
  dateTimeTo: string
  fundsOrganisationId?: string | undefined
  groupBy: SummaryGroupBy
  timeZone: string
}

export interface SummaryGroup {
  key: string
  /** The partner's, project's or organisation's name; absent for time and currency keys (or a key no longer known). */
  name?: string | undefined
  /** A project's country. */
  countryCode?: string | null | undefined
  /** A time bucket's instants, clipped to the window. */
  from?: Date | undefined
  to?: Date | undefined
  totals: CurrencyTotals[]
}

export interface AllocationSummary {
  from: Date
  to: Date
  timeZone: string
  groupBy: SummaryGroupBy
  totals: CurrencyTotals[]
  groups: SummaryGroup[]
}

const byKey = <T extends { key: string }>(a: T, b: T) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

/** Rows of one read, per key: that key's totals per currency. */
function totalsByKey(rows: readonly { key: string; totals: CurrencyTotals }[]): Map<string, CurrencyTotals[]> {
  const grouped = new Map<string, CurrencyTotals[]>()
  for (const row of rows) {
    const parts = grouped.get(row.key)
    if (parts) parts.push(row.totals)
    else grouped.set(row.key, [row.totals])
  }
  // A read has one row per key and currency, so most keys need no adding up: only ordering, when several currencies.
  for (const [key, parts] of grouped) if (parts.length > 1) grouped.set(key, sumByCurrency(parts))
  return grouped
}

/**
 * The summary of a key's records in [dateTimeFrom, dateTimeTo): the window's totals per currency and the groups in key
 * order. Time groupings list every bucket of the window (each with every currency of the window, zero where it has no
 * records); other groupings list the keys that have records.
 */
export async function summariseAllocations(deps: SummaryDeps, principal: Principal, query: SummaryQuery): Promise<AllocationSummary> {
  const filter = await filterOf(deps, principal, {
    dateTimeFrom: query.dateTimeFrom,
    dateTimeTo: query.dateTimeTo,
    fundsOrganisationId: query.fundsOrganisationId,
  })
  const { from, to, rootOrganisationId } = filter
  const { groupBy, timeZone } = query
  const dimension = dimensionOf(groupBy)
  // By organisation, rows per organisation are needed even for the whole tree (every organisation of it, as the list).
  const organisations: SummaryRead['organisations'] =
    filter.organisationIds ?? (groupBy === 'organisation' ? await findTreeOrganisationIds(deps.db, rootOrganisationId) : 'tree')
  const scope = organisations === 'tree' ? 'tree' : 'organisation'
  const buckets = isTimeGroupBy(groupBy) ? timeBuckets(groupBy, from, to, timeZone) : [{ key: '', from, to }]
  const key: SummaryRead['key'] = isTimeGroupBy(groupBy)
    ? 'bucket'
    : groupBy === 'currency'
      ? 'currency'
      : groupBy === 'organisation'
        ? 'organisation'
        : 'group'

  // The reads: the grouping, and (for partners and projects, whose groups may share a record) the window's totals by
  // the `total` dimension; any other grouping partitions the records, so its groups add up to the totals.
  const plan = (rolledUntil: Date | null): SummaryRead[] => [
    { rootOrganisationId, organisations, dimension, key, pieces: planPieces(buckets, rolledUntil, ROLLUP_GRAINS[dimension][scope]) },
    ...(dimension === 'total'
      ? []
      : [
          {
            rootOrganisationId,
            organisations,
            dimension: 'total' as const,
            key: 'currency' as const,
            pieces: planPieces([{ from, to }], rolledUntil, ROLLUP_GRAINS.total[scope]),
          },
        ]),
  ]
  const results = await readConsistently(deps.db, plan)
  const grouped = totalsByKey(results[0] ?? [])
  const totals =
    dimension === 'total' ? sumByCurrency([...grouped.values()].flat()) : sumByCurrency((results[1] ?? []).map((r) => r.totals))

  let groups: SummaryGroup[]
  if (isTimeGroupBy(groupBy)) {
    const currencies = totals.map((t) => t.currencyCode)
    groups = buckets.map((bucket, index) => {
      const found = new Map((grouped.get(String(index)) ?? []).map((t) => [t.currencyCode, t]))
      return {
        key: bucket.key,
        from: bucket.from,
        to: bucket.to,
        totals: currencies.map((currency) => found.get(currency) ?? zeroTotals(currency)),
      }
    })
  } else if (groupBy === 'currency') {
    groups = [...grouped].map(([currency, parts]) => ({ key: currency, totals: parts })).sort(byKey)
  } else {
    // Each row carries its key's label, read in the summary's own statement.
    const labels = new Map((results[0] ?? []).map((row) => [row.key, row.label]))
    const withCountry = groupBy === 'project'
    groups = [...grouped].map(([id, parts]) => ({ key: id, ...labelFields(labels.get(id), withCountry), totals: parts })).sort(byKey)
  }
  return { from, to, timeZone, groupBy, totals, groups }
}

/** The rolled_until each database's last summary read saw. */
const lastRolledUntil = new WeakMap<Kysely<Database>, Date | null>()

/** Attempts before a summary takes a transaction: the worker moves rolled_until once per interval, or per day caught up. */
const OPTIMISTIC_ATTEMPTS = 3

/**
 * The rows of reads planned for rolled_until, read in one snapshot that saw that same rolled_until (docs/summary.md,
 * "Why a summary is exact"). Usually one statement: every read at once, planned for the rolled_until the previous read
 * saw, reporting the rolled_until it saw; when the worker moved it in between, plan again with the new one. After a few such races, one
 * REPEATABLE READ transaction, where both statements share a snapshot.
 */
async function readConsistently(db: Kysely<Database>, plan: (rolledUntil: Date | null) => SummaryRead[]): Promise<SummaryRow[][]> {
  // The rolled_until the last read saw is a good first guess (it moves once per worker interval): when it is still
  // current, the summary is one statement. A stale guess costs one more read, never an inexact summary.
  let rolledUntil = lastRolledUntil.has(db) ? (lastRolledUntil.get(db) ?? null) : await findRolledUntil(db)
  for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
    const read = await readSummaries(db, plan(rolledUntil))
    lastRolledUntil.set(db, read.rolledUntil)
    if (read.rolledUntil?.getTime() === rolledUntil?.getTime()) return read.results
    rolledUntil = read.rolledUntil
  }
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => (await readSummaries(trx, plan(await findRolledUntil(trx)))).results)
}

const labelFields = (label: GroupLabel | undefined, withCountry: boolean): Pick<SummaryGroup, 'name' | 'countryCode'> => ({
  ...(label ? { name: label.name } : {}),
  ...(withCountry ? { countryCode: label?.countryCode ?? null } : {}),
})
