// Funds allocations and their reversals. An allocation is one row: its entries are one jsonb array, its
// Idempotency-Key is unique per organisation, and a CHECK makes Postgres refuse entries that do not sum to
// the amounts paid. An allocation, its entries, its profit-share lines (a column of its row), its tax-receipt outbox
// row, its webhook event and its partner rows (impact_record_partners) are written by one statement.
import { sql, type Kysely } from 'kysely'
import { formatMinorUnits, minorUnitsOf, parseDecimal, toMinorUnits } from '../../domain/money.js'
import { serviceFeeOf, type ProfitShareLine, type ProfitShareSplit } from '../../domain/profit-share.js'
import type { AllocationSplit } from '../../domain/types.js'
import type {
  AllocationRow,
  Database,
  NewAllocationRow,
  StoredAllocationEntry,
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

const entriesOf = (split: AllocationSplit): StoredAllocationEntry[] => [
  ...split.credits.map(({ quantityTonnes, projectId, impactPartnerId, ...amounts }) => ({
    kind: 'credit' as const,
    projectId,
    impactPartnerId,
    ...amounts,
    quantityTonnes,
  })),
  ...split.contributions.map(({ impactPartnerId, ...amounts }) => ({
    kind: 'contribution' as const,
    projectId: null,
    impactPartnerId,
    ...amounts,
    quantityTonnes: null,
  })),
]

const amountsOf = (e: StoredAllocationEntry) => ({
  impactAmount: e.impactAmount,
  impactSalesTaxAmount: e.impactSalesTaxAmount,
  impactSalesTaxRate: e.impactSalesTaxRate,
  serviceFeeAmount: e.serviceFeeAmount,
  serviceFeeSalesTaxAmount: e.serviceFeeSalesTaxAmount,
  serviceFeeSalesTaxRate: e.serviceFeeSalesTaxRate,
})

/** Entries are stored exactly as the domain formatted them (jsonb keeps strings as written). */
export const splitOf = (currencyCode: string, entries: readonly StoredAllocationEntry[]): AllocationSplit => ({
  currencyCode,
  credits: entries
    .filter((e) => e.kind === 'credit')
    .map((e) => ({
      projectId: e.projectId ?? '',
      impactPartnerId: e.impactPartnerId,
      ...amountsOf(e),
      quantityTonnes: e.quantityTonnes ?? '0',
    })),
  contributions: entries.filter((e) => e.kind === 'contribution').map((e) => ({ impactPartnerId: e.impactPartnerId, ...amountsOf(e) })),
})

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

/** The row, with the top of the organisation's tree found by the INSERT itself (no extra round trip). */
const allocationToRow = (a: Allocation) => ({
  ...allocationColumns(a),
  root_organisation_id: sql<string>`organisation_root(${a.organisationId}::uuid)`,
})

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
 * Raw SQL: a data-modifying CTE over the insert's RETURNING and jsonb_array_elements.
 */
const partnerRows = (of: 'allocations' | 'reversals') => sql`
  written_partners AS (
    INSERT INTO impact_record_partners (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id)
    SELECT DISTINCT (e.entry->>'impactPartnerId')::uuid, w.root_organisation_id, w.created_at, w.id, w.organisation_id,
      ${of === 'allocations' ? sql`w.id` : sql`w.allocation_id`}
    FROM written w
    ${of === 'allocations' ? sql`` : sql`JOIN allocations a ON a.id = w.allocation_id`}
    CROSS JOIN LATERAL jsonb_array_elements(${of === 'allocations' ? sql`w.entries` : sql`a.entries`}) AS e(entry)
  )`

/** What the allocation INSERT returns: its id, and what its partner rows copy. */
const WRITTEN_ALLOCATION = ['id', 'root_organisation_id', 'organisation_id', 'created_at', 'entries'] as const

/** Looks up several (organisation, key) pairs in one statement; one result per pair, in order. */
export async function findAllocationsByKeys(
  db: Kysely<Database>,
  pairs: readonly { organisationId: string; idempotencyKey: string }[],
): Promise<(Allocation | undefined)[]> {
  if (pairs.length === 0) return []
  const rows = await db
    .selectFrom('allocations')
    .selectAll()
    .where((eb) =>
      eb(
        eb.refTuple('organisation_id', 'idempotency_key'),
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
  const insert = db
    .insertInto('allocations')
    .values(items.map((i) => allocationToRow(i.allocation)))
    .onConflict((oc) => oc.columns(['organisation_id', 'idempotency_key']).doNothing())
    .returning(WRITTEN_ALLOCATION)
  const ids = new Set(
    await insertWithEvents(
      db,
      insert,
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
  const insert = db
    .insertInto('allocations')
    .values(allocationToRow(allocation))
    .onConflict((oc) => oc.columns(['organisation_id', 'idempotency_key']).doNothing())
    .returning(WRITTEN_ALLOCATION)
  const receiptRow = sql`
    written_receipt AS (
      INSERT INTO tax_receipts (id, allocation_id, organisation_id, consumer_email, payload, status, attempts, next_attempt_at, created_at)
      SELECT ${receipt.id}::uuid, w.id, ${allocation.organisationId}::uuid, ${receipt.consumerEmail}::text,
        ${JSON.stringify(receipt.payload)}::jsonb, 'pending', 0, ${allocation.createdAt}::timestamptz, ${allocation.createdAt}::timestamptz
      FROM written w
    )`
  const written = await insertWithEvents(db, insert, [event], sql.join([receiptRow, partnerRows('allocations')]))
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
  const insert = db
    .insertInto('allocation_reversals')
    .columns(['id', 'allocation_id', 'organisation_id', 'created_at', 'root_organisation_id', 'consumer_reference'])
    .expression((eb) =>
      eb
        .selectFrom('allocations as a')
        .select([
          eb.cast<string>(eb.val(reversal.id), 'uuid').as('id'),
          'a.id as allocation_id',
          'a.organisation_id',
          eb.cast<Date>(eb.val(reversal.createdAt), 'timestamptz').as('created_at'),
          'a.root_organisation_id',
          'a.consumer_reference',
        ])
        .where('a.id', '=', reversal.allocationId),
    )
    .onConflict((oc) => oc.column('allocation_id').doNothing())
    .returning(['id', 'allocation_id', 'root_organisation_id', 'organisation_id', 'created_at'])
  const written = await insertWithEvents(db, insert, [event], partnerRows('reversals'))
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
