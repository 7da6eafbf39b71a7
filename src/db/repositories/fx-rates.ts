// Reference exchange rates imported by operators: ECB rates (units of currency per 1 EUR), one row per date and
// currency. Dates are read as text (YYYY-MM-DD), never as JS Dates (which pg would place at local midnight).
import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'

export interface FxRate {
  date: string
  currencyCode: string
  /** Decimal string. */
  rate: string
}

/** The rates of the latest stored date. */
export interface StoredFxRates {
  date: string
  rates: Record<string, string>
  /** When the newest of these rows was written. */
  importedAt: Date
}

const CHUNK = 1000

/**
 * Inserts or updates rates by (date, currency). A row whose rate is unchanged keeps its imported_at, so importing
 * the same file twice changes nothing.
 */
export async function upsertFxRates(db: Kysely<Database>, rates: readonly FxRate[], source: string, now: Date): Promise<number> {
  let changed = 0
  for (let start = 0; start < rates.length; start += CHUNK) {
    const result = await db
      .insertInto('fx_rates')
      .values(
        rates.slice(start, start + CHUNK).map((r) => ({
          rate_date: r.date,
          currency_code: r.currencyCode,
          rate: r.rate,
          source,
          imported_at: now,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['rate_date', 'currency_code'])
          .doUpdateSet((eb) => ({
            rate: eb.ref('excluded.rate'),
            source: eb.ref('excluded.source'),
            imported_at: eb.ref('excluded.imported_at'),
          }))
          .where((eb) => eb('fx_rates.rate', 'is distinct from', eb.ref('excluded.rate'))),
      )
      .executeTakeFirst()
    changed += Number(result.numInsertedOrUpdatedRows ?? 0)
  }
  return changed
}

export async function findLatestFxRates(db: Kysely<Database>): Promise<StoredFxRates | undefined> {
  const rows = await db
    .selectFrom('fx_rates')
    // Raw SQL for the cast only: a date read as text stays a calendar date.
    .select([sql<string>`rate_date::text`.as('date'), 'currency_code', 'rate', 'imported_at'])
    .where('rate_date', '=', (eb) => eb.selectFrom('fx_rates').select((e) => e.fn.max('rate_date').as('latest')))
    .execute()
  const first = rows[0]
  if (!first) return undefined
  const rates: Record<string, string> = {}
  let importedAt = first.imported_at
  for (const row of rows) {
    rates[row.currency_code] = row.rate
    if (row.imported_at > importedAt) importedAt = row.imported_at
  }
  return { date: first.date, rates, importedAt }
}
