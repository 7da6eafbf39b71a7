// Funds allocations and their reversals. An allocation is one row: its entries are one jsonb array, its
// Idempotency-Key is unique per organisation, and a CHECK makes Postgres refuse entries that do not sum to
// the amounts paid. An allocation, its entries, its profit-share lines (a column of its row), its tax-receipt outbox
// row, its webhook event and its partner rows (impact_record_partners) are written by one statement.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { formatMinorUnits, minorUnitsOf, parseDecimal, toMinorUnits } from '../../domain/money.js'
import { serviceFeeOf, type ProfitShareLine, type ProfitShareSplit } from '../../domain/profit-share.js'
import type { AllocationEntryAmounts, AllocationSplit, ContributionAllocationEntry, CreditAllocationEntry } from '../../domain/types.js'
import type {
  AllocationRow,
  Database,
  NewAllocationRow,
  StoredAllocationEntry,
  StoredContributionEntry,
  StoredCreditEntry,
  StoredEntryAmounts,
  StoredMerchant,
  StoredProfitShare,
  StoredProfitShareLine,
  TaxReceiptPayload,
} from '../database.js'
import { insertWithEvents, type RecordEventDraft } from './webhooks.js'

export interface Allocation {
  id: string
  organisationId: string
  quoteId: string
  idempotencyKey: string
  /** SHA-256 of the canonical request: a replay must carry the same request. */
  requestHash: Buffer
  currencyCode: string
  /** Amounts paid, as decimal strings in the allocation currency; null when that section was not paid. */
  creditsAmount: string | null
  contributionAmount: string | null
  taxLiability: 'platform' | 'organisation'
  issueTaxReceipt: boolean
  split: AllocationSplit
  createdAt: Date
  /** The organisation of the API key that made it (the party collecting the funds). */
  collectionOrganisationId: string
  /** The quote's consumer.reference. */
  consumerReference: string | null
  /** The quote's merchant, when it named one. */
  merchant: StoredMerchant | null
  /** Who receives how much of its service fee; null when no organisation up the chain keeps a share. */
  profitShare: ProfitShareSplit | null
}

export interface NewTaxReceipt {
  id: string
  consumerEmail: string
  payload: TaxReceiptPayload
}

export interface Reversal {
  id: string
  allocationId: string
  organisationId: string
  createdAt: Date
}

/** A line's amounts in their stored order (database.ts, StoredAllocationEntry). */
const storedAmounts = (a: AllocationEntryAmounts): StoredEntryAmounts => [
  a.impactAmount,
  a.impactSalesTaxRate,
  a.impactSalesTaxAmount,
  a.serviceFeeAmount,
  a.serviceFeeSalesTaxRate,
  a.serviceFeeSalesTaxAmount,
]

const entriesOf = (split: AllocationSplit): StoredAllocationEntry[] => [
  ...split.credits.map((c): StoredCreditEntry => ['cr', c.impactPartnerId, c.projectId, c.quantityTonnes, ...storedAmounts(c)]),
  ...split.contributions.map((c): StoredContributionEntry => ['co', c.impactPartnerId, null, null, ...storedAmounts(c)]),
]

/**
 * Entries are stored exactly as the domain formatted them (jsonb keeps strings as written). Read by position into
 * object literals, keyed in the order the presenters have always received them: a page reads hundreds of lines, and
 * destructuring with rest elements built two arrays per line.
 */
export const splitOf = (currencyCode: string, entries: readonly StoredAllocationEntry[]): AllocationSplit => {
  const credits: CreditAllocationEntry[] = []
  const contributions: ContributionAllocationEntry[] = []
  for (const e of entries) {
    if (e[0] === 'cr') {
      credits.push({
        projectId: e[2],
        impactPartnerId: e[1],
        impactAmount: e[4],
        impactSalesTaxAmount: e[6],
        impactSalesTaxRate: e[5],
        serviceFeeAmount: e[7],
        serviceFeeSalesTaxAmount: e[9],
        serviceFeeSalesTaxRate: e[8],
        quantityTonnes: e[3],
      })
    } else {
      contributions.push({
        impactPartnerId: e[1],
        impactAmount: e[4],
        impactSalesTaxAmount: e[6],
        impactSalesTaxRate: e[5],
        serviceFeeAmount: e[7],
        serviceFeeSalesTaxAmount: e[9],
        serviceFeeSalesTaxRate: e[8],
      })
    }
  }
  return { currencyCode, credits, contributions }
}

/**
 * allocations.profit_share (database.ts, StoredProfitShare): the settlement model, then per line its level, funds
 * share, tax rate and tax, plus billing currency, rate and billing share only when it is billed in another currency.
 * Nothing that can be derived is stored: the platform's part is the fee minus the lines.
 */
export function encodeProfitShare(split: ProfitShareSplit, fundsCurrencyCode: string): StoredProfitShare {
  const lines = split.lines.map((l): StoredProfitShareLine =>
    l.billingCurrencyCode === fundsCurrencyCode
      ? [l.level, l.fundsProfitShare, l.profitShareTaxRate, l.profitShareTax]
      : [
          l.level,
          l.fundsProfitShare,
          l.profitShareTaxRate,
          l.profitShareTax,
          l.billingCurrencyCode,
          l.billingCurrencyExchangeRate,
          l.profitShare,
        ],
  )
  return [split.settlementModel, ...lines]
}

/** The stored profit share read back; `fee` is the allocation's service fee (its entries'), for the platform's part. */
export function decodeProfitShare(stored: StoredProfitShare, fundsCurrencyCode: string, fee: string): ProfitShareSplit {
  const [settlementModel, ...storedLines] = stored
  const digits = minorUnitsOf(fundsCurrencyCode)
  const lines = storedLines.map((l): ProfitShareLine => {
    const [level, fundsProfitShare, profitShareTaxRate, profitShareTax, billingCurrencyCode, rate, billed] = l
    return {
      level,
      fundsProfitShare,
      billingCurrencyCode: billingCurrencyCode ?? fundsCurrencyCode,
      billingCurrencyExchangeRate: rate ?? '1',
      profitShare: billed ?? fundsProfitShare,
      profitShareTax,
      profitShareTaxRate,
    }
  })
  const minor = (amount: string) => toMinorUnits(parseDecimal(amount), digits)
  const platform = lines.reduce((rest, line) => rest - minor(line.fundsProfitShare), minor(fee))
  return { settlementModel, platformProfitShare: formatMinorUnits(platform, digits), lines }
}

/** An allocation row's profit share, or null. */
export const profitShareOf = (stored: StoredProfitShare | null, split: AllocationSplit): ProfitShareSplit | null =>
  stored === null ? null : decodeProfitShare(stored, split.currencyCode, serviceFeeOf(split))

const allocationColumns = (a: Allocation): Omit<NewAllocationRow, 'root_organisation_id'> => ({
  id: a.id,
  organisation_id: a.organisationId,
  quote_id: a.quoteId,
  idempotency_key: a.idempotencyKey,
  request_hash: a.requestHash,
  currency_code: a.currencyCode,
  credits_amount: a.creditsAmount,
  contribution_amount: a.contributionAmount,
  tax_liability: a.taxLiability,
  issue_tax_receipt: a.issueTaxReceipt,
  entries: JSON.stringify(entriesOf(a.split)),
  created_at: a.createdAt,
  collection_organisation_id: a.collectionOrganisationId,
  consumer_reference: a.consumerReference,
  merchant: a.merchant === null ? null : JSON.stringify(a.merchant),
  profit_share: a.profitShare === null ? null : JSON.stringify(encodeProfitShare(a.profitShare, a.currencyCode)),
})

const allocationFromRow = (row: AllocationRow): Allocation => {
  const split = splitOf(row.currency_code, row.entries)
  return {
    id: row.id,
    organisationId: row.organisation_id,
    quoteId: row.quote_id,
    idempotencyKey: row.idempotency_key,
    requestHash: Buffer.from(row.request_hash),
    currencyCode: row.currency_code,
    creditsAmount: row.credits_amount,
    contributionAmount: row.contribution_amount,
    taxLiability: row.tax_liability,
    issueTaxReceipt: row.issue_tax_receipt,
    split,
    createdAt: row.created_at,
    collectionOrganisationId: row.collection_organisation_id,
    consumerReference: row.consumer_reference,
    merchant: row.merchant,
    profitShare: profitShareOf(row.profit_share, split),
  }
}

/**
 * The CTE that writes the partner rows of the records `written` returns (docs/reconciliation.md, "Storage and
 * indexes"): one per distinct impact partner of the record's lines, so they exist only if the record was written.
 * `written` returns the allocations' rows (with their entries), or the reversals' (lines read from their allocation).
 * A line's impact partner is its element 1 (database.ts, StoredAllocationEntry). Raw SQL: a data-modifying CTE over the
 * insert's RETURNING and jsonb_array_elements.
 */
const partnerRows = (of: 'allocations' | 'reversals') => sql`
  written_partners AS (
    INSERT INTO impact_record_partners (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id,
      allocation_created_at)
    SELECT DISTINCT (e.entry->>1)::uuid, w.root_organisation_id, w.created_at, w.id, w.organisation_id,
      ${of === 'allocations' ? sql`w.id, w.created_at` : sql`w.allocation_id, w.allocation_created_at`}
    FROM written w
    ${of === 'allocations' ? sql`` : sql`JOIN allocations a ON a.id = w.allocation_id AND a.created_at = w.allocation_created_at`}
    CROSS JOIN LATERAL jsonb_array_elements(${of === 'allocations' ? sql`w.entries` : sql`a.entries`}) AS e(entry)
  )`

/**
 * Looks up several (organisation, key) pairs in one statement; one result per pair, in order. The keys table names each
 * allocation's partition row, so a lookup is one probe of its primary key and one of its month's.
 */
export async function findAllocationsByKeys(
  db: Kysely<Database>,
  pairs: readonly { organisationId: string; idempotencyKey: string }[],
): Promise<(Allocation | undefined)[]> {
  if (pairs.length === 0) return []
  const rows = await db
    .selectFrom('allocation_idempotency_keys as k')
    .innerJoin('allocations as a', (join) =>
      join.onRef('a.id', '=', 'k.allocation_id').onRef('a.created_at', '=', 'k.allocation_created_at'),
    )
    .selectAll('a')
    .where((eb) =>
      eb(
        eb.refTuple('k.organisation_id', 'k.idempotency_key'),
        'in',
        pairs.map((p) => eb.tuple(p.organisationId, p.idempotencyKey)),
      ),
    )
    .execute()
  const found = new Map(rows.map((r) => [`${r.organisation_id}|${r.idempotency_key}`, r]))
  return pairs.map((p) => {
    const row = found.get(`${p.organisationId}|${p.idempotencyKey}`)
    return row && allocationFromRow(row)
  })
}

/** The columns of an allocation row, in the order of allocationDrafts' VALUES. */
const DRAFT_COLUMNS = sql.raw(
  'id, organisation_id, quote_id, idempotency_key, request_hash, currency_code, credits_amount, contribution_amount, tax_liability, ' +
    'issue_tax_receipt, entries, created_at, collection_organisation_id, consumer_reference, merchant, profit_share',
)

/**
 * The CTEs that write allocations exactly once per (organisation, Idempotency-Key): `allocation_drafts` (the rows, typed),
 * `keyed` (the keys this statement took: ON CONFLICT DO NOTHING on the keys table's primary key, where a concurrent
 * duplicate waits for the first writer, bounded by lock_timeout, and then takes nothing; within one batch the first
 * row wins) and `written` (the allocations of the keys taken, each with the top of its tree found by the INSERT
 * itself). Raw SQL: data-modifying CTEs over a VALUES list.
 */
function allocationWrites(allocations: readonly Allocation[]): RawBuilder<unknown> {
  const draft = (a: Allocation) => {
    const c = allocationColumns(a)
    return sql`(${c.id}::uuid, ${c.organisation_id}::uuid, ${c.quote_id}::uuid, ${c.idempotency_key}::text, ${c.request_hash}::bytea,
      ${c.currency_code}::text, ${c.credits_amount ?? null}::numeric, ${c.contribution_amount ?? null}::numeric, ${c.tax_liability}::text,
      ${c.issue_tax_receipt}::boolean, ${c.entries}::jsonb, ${c.created_at}::timestamptz, ${c.collection_organisation_id}::uuid,
      ${c.consumer_reference ?? null}::text, ${c.merchant ?? null}::jsonb, ${c.profit_share ?? null}::jsonb)`
  }
  return sql`
    allocation_drafts (${DRAFT_COLUMNS}) AS (VALUES ${sql.join(allocations.map(draft))}),
    keyed AS (
      INSERT INTO allocation_idempotency_keys (organisation_id, idempotency_key, allocation_id, allocation_created_at)
      SELECT organisation_id, idempotency_key, id, created_at FROM allocation_drafts
      ON CONFLICT DO NOTHING
      RETURNING allocation_id
    ),
    written AS (
      INSERT INTO allocations (${DRAFT_COLUMNS}, root_organisation_id)
      SELECT ${DRAFT_COLUMNS}, organisation_root(organisation_id) FROM allocation_drafts
      WHERE id IN (SELECT allocation_id FROM keyed)
      RETURNING id, root_organisation_id, organisation_id, created_at, entries
    )`
}

/**
 * Writes several allocations (none with a tax receipt), each with its webhook event and the event's deliveries and its
 * partner rows, in one statement; returns, per allocation, whether it was written (false: its organisation had already
 * used the key, possibly within this very batch, in which case the first row wins, and no event or partner row is
 * written for it). The
 * unique (organisation_id, idempotency_key) constraint decides races: a concurrent duplicate waits for the first
 * writer (bounded by lock_timeout) and then inserts nothing.
 */
export async function insertAllocations(
  db: Kysely<Database>,
  items: readonly { allocation: Allocation; event: RecordEventDraft }[],
): Promise<boolean[]> {
  if (items.length === 0) return []
  const ids = new Set(
    await insertWithEvents(
      db,
      { ctes: allocationWrites(items.map((i) => i.allocation)) },
      items.map((i) => i.event),
      partnerRows('allocations'),
    ),
  )
  return items.map((i) => ids.has(i.allocation.id))
}

/**
 * Writes an allocation, its tax-receipt outbox row, its webhook event (with deliveries) and its partner rows in ONE
 * statement: the receipt, the event and the partner rows are inserted from the allocation's RETURNING, so they exist only if the allocation was.
 * False when the key was already used.
 */
export async function insertAllocationWithReceipt(
  db: Kysely<Database>,
  allocation: Allocation,
  receipt: NewTaxReceipt,
  event: RecordEventDraft,
): Promise<boolean> {
  const receiptRow = sql`
    written_receipt AS (
      INSERT INTO tax_receipts (id, allocation_id, organisation_id, consumer_email, payload, status, attempts, next_attempt_at, created_at)
      SELECT ${receipt.id}::uuid, w.id, ${allocation.organisationId}::uuid, ${receipt.consumerEmail}::text,
        ${JSON.stringify(receipt.payload)}::jsonb, 'pending', 0, ${allocation.createdAt}::timestamptz, ${allocation.createdAt}::timestamptz
      FROM written w
    )`
  const written = await insertWithEvents(
    db,
    { ctes: allocationWrites([allocation]) },
    [event],
    sql.join([receiptRow, partnerRows('allocations')]),
  )
  return written.length === 1
}

export async function findAllocationById(db: Kysely<Database>, id: string): Promise<Allocation | undefined> {
  const row = await db.selectFrom('allocations').selectAll().where('id', '=', id).executeTakeFirst()
  return row && allocationFromRow(row)
}

/**
 * Records the reversal and its webhook event unless the allocation already has one; true when this call recorded
 * it. One statement: what the reversal's record is filtered by (tree, consumer reference) is copied from its
 * allocation by the INSERT, and the event and its partner rows are written from its RETURNING.
 */
export async function insertReversal(db: Kysely<Database>, reversal: Reversal, event: RecordEventDraft): Promise<boolean> {
  // One reversal per allocation: the keys table's primary key is the allocation (reversals are partitioned by their
  // own time, so their table cannot hold that unique key). A concurrent second reversal waits for the first writer's
  // key row and then takes nothing.
  const ctes = sql`
    reversal_source AS (
      SELECT id, created_at, organisation_id, root_organisation_id, consumer_reference
      FROM allocations WHERE id = ${reversal.allocationId}::uuid
    ),
    reversal_keyed AS (
      INSERT INTO allocation_reversal_keys (allocation_id, reversal_id, reversal_created_at)
      SELECT id, ${reversal.id}::uuid, ${reversal.createdAt}::timestamptz FROM reversal_source
      ON CONFLICT DO NOTHING
      RETURNING allocation_id
    ),
    written AS (
      INSERT INTO allocation_reversals
        (id, allocation_id, allocation_created_at, organisation_id, created_at, root_organisation_id, consumer_reference)
      SELECT ${reversal.id}::uuid, s.id, s.created_at, s.organisation_id, ${reversal.createdAt}::timestamptz,
        s.root_organisation_id, s.consumer_reference
      FROM reversal_source s WHERE s.id IN (SELECT allocation_id FROM reversal_keyed)
      RETURNING id, allocation_id, allocation_created_at, root_organisation_id, organisation_id, created_at
    )`
  const written = await insertWithEvents(db, { ctes }, [event], partnerRows('reversals'))
  return written.length === 1
}

/** Money invariant, for tests and operators: allocations whose entries do not sum to the amounts paid. */
export async function findUnbalancedAllocations(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT a.id FROM allocations a
    LEFT JOIN allocation_entries e ON e.allocation_id = a.id
    GROUP BY a.id, a.credits_amount, a.contribution_amount
    HAVING coalesce(sum(e.impact_amount + e.impact_sales_tax_amount + e.service_fee_amount + e.service_fee_sales_tax_amount)
                      FILTER (WHERE e.kind = 'credit'), 0) IS DISTINCT FROM coalesce(a.credits_amount, 0)
        OR coalesce(sum(e.impact_amount + e.impact_sales_tax_amount + e.service_fee_amount + e.service_fee_sales_tax_amount)
                      FILTER (WHERE e.kind = 'contribution'), 0) IS DISTINCT FROM coalesce(a.contribution_amount, 0)`.execute(db)
  return rows.map((r) => r.id)
}
