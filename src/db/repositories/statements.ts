// Statements (docs/reconciliation.md, "Statements"): the sums of one organisation's month of impact and profit-share
// records, by currency, in SQL (exact numeric sums over the records' jsonb lines). The records are read through the
// tree's (root_organisation_id, created_at, id) indexes, one month of the tree; a reversal counts negated.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../database.js'

export interface StatementScope {
  rootOrganisationId: string
  organisationId: string
  /** The organisation and all its descendants, whatever their status (its profit share comes from their allocations). */
  subtreeIds: readonly string[]
  /** Its depth in the tree: its profit-share lines are those at this level. */
  level: number
  from: Date
  to: Date
}

/** Σ of the records the organisation collected (its API key made the allocation), by funds currency. */
export interface CollectedSums {
  currencyCode: string
  allocations: number
  reversals: number
  total: string
  impact: string
  impactTax: string
  serviceFee: string
  serviceFeeTax: string
}

/** Σ of every beneficiary's funds share on the net-settled records it collected, by funds currency. */
export interface WithheldSums {
  currencyCode: string
  amount: string
}

/** Σ of its own profit-share lines, by billing currency and settlement model. */
export interface EarnedSums {
  currencyCode: string
  settlementModel: 'net' | 'gross' | 'invoice'
  lines: number
  profitShare: string
  profitShareTax: string
}

/**
 * The month's records of the tree: allocations, and reversals as their allocation's content with sign −1. Raw SQL:
 * a UNION over the two tables, each read by its (root, created_at) index range.
 */
const records = (scope: StatementScope): RawBuilder<unknown> => sql`
  records AS (
    SELECT a.id, a.currency_code, a.entries, a.profit_share, a.collection_organisation_id, a.organisation_id, 1 AS sign
    FROM allocations a
    WHERE a.root_organisation_id = ${scope.rootOrganisationId}::uuid
      AND a.created_at >= ${scope.from}::timestamptz AND a.created_at < ${scope.to}::timestamptz
    UNION ALL
    SELECT r.id, a.currency_code, a.entries, a.profit_share, a.collection_organisation_id, a.organisation_id, -1
    FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id AND a.created_at = r.allocation_created_at
    WHERE r.root_organisation_id = ${scope.rootOrganisationId}::uuid
      AND r.created_at >= ${scope.from}::timestamptz AND r.created_at < ${scope.to}::timestamptz
  )`

/** The three sums of a statement (three statements over the same month of records; a report, not a hot path). */
export async function findStatementSums(
  db: Kysely<Database>,
  scope: StatementScope,
): Promise<{ collected: CollectedSums[]; withheld: WithheldSums[]; earned: EarnedSums[] }> {
  // A line of entries, as allocation_lines gives it, is an array (database.ts, StoredAllocationEntry): impact at 4, its
  // tax 6, service fee 7, its tax 9.
  const collected = await sql<{
    currency_code: string
    allocations: string
    reversals: string
    total: string
    impact: string
    impact_tax: string
    service_fee: string
    service_fee_tax: string
  }>`
    WITH ${records(scope)}
    SELECT r.currency_code,
           count(DISTINCT r.id) FILTER (WHERE r.sign = 1) AS allocations,
           count(DISTINCT r.id) FILTER (WHERE r.sign = -1) AS reversals,
           sum(r.sign * ((e->>4)::numeric + (e->>6)::numeric + (e->>7)::numeric + (e->>9)::numeric))::text AS total,
           sum(r.sign * (e->>4)::numeric)::text AS impact,
           sum(r.sign * (e->>6)::numeric)::text AS impact_tax,
           sum(r.sign * (e->>7)::numeric)::text AS service_fee,
           sum(r.sign * (e->>9)::numeric)::text AS service_fee_tax
    FROM records r CROSS JOIN LATERAL allocation_lines(r.entries) AS e
    WHERE r.collection_organisation_id = ${scope.organisationId}::uuid
    GROUP BY r.currency_code ORDER BY r.currency_code`.execute(db)
  // A line is an array after the settlement model (element 0): [level, fundsShare, taxRate, tax, (currency, rate, share)].
  const withheld = await sql<{ currency_code: string; amount: string }>`
    WITH ${records(scope)}
    SELECT r.currency_code, sum(r.sign * (l.line->>1)::numeric)::text AS amount
    FROM records r CROSS JOIN LATERAL jsonb_array_elements(r.profit_share) WITH ORDINALITY AS l(line, n)
    WHERE r.collection_organisation_id = ${scope.organisationId}::uuid AND r.profit_share->>0 = 'net' AND l.n > 1
    GROUP BY r.currency_code ORDER BY r.currency_code`.execute(db)
  const earned = await sql<{
    currency_code: string
    settlement_model: EarnedSums['settlementModel']
    lines: string
    share: string
    tax: string
  }>`
    WITH ${records(scope)}
    SELECT coalesce(l.line->>4, r.currency_code) AS currency_code, r.profit_share->>0 AS settlement_model, count(*) AS lines,
           sum(r.sign * coalesce(l.line->>6, l.line->>1)::numeric)::text AS share,
           sum(r.sign * (l.line->>3)::numeric)::text AS tax
    FROM records r CROSS JOIN LATERAL jsonb_array_elements(r.profit_share) WITH ORDINALITY AS l(line, n)
    WHERE r.organisation_id = ANY(${[...scope.subtreeIds]}::uuid[]) AND l.n > 1 AND (l.line->>0)::int = ${scope.level}
    GROUP BY 1, 2 ORDER BY 1, 2`.execute(db)
  return {
    collected: collected.rows.map((r) => ({
      currencyCode: r.currency_code,
      allocations: Number(r.allocations),
      reversals: Number(r.reversals),
      total: r.total,
      impact: r.impact,
      impactTax: r.impact_tax,
      serviceFee: r.service_fee,
      serviceFeeTax: r.service_fee_tax,
    })),
    withheld: withheld.rows.map((r) => ({ currencyCode: r.currency_code, amount: r.amount })),
    earned: earned.rows.map((r) => ({
      currencyCode: r.currency_code,
      settlementModel: r.settlement_model,
      lines: Number(r.lines),
      profitShare: r.share,
      profitShareTax: r.tax,
    })),
  }
}
