import { CompiledQuery, sql, type Kysely } from 'kysely'
import type { Database, StoredAllocationEntry, TaxReceiptPayload } from '../database.js'

export interface NewAllocation {
  id: string
  organisationId: string
  quoteId: string
  idempotencyKey: string
  requestHash: Buffer
  currencyCode: string
  creditsAmount: string | null
  contributionAmount: string | null
  taxLiability: 'platform' | 'organisation'
  issueTaxReceipt: boolean
  entries: readonly StoredAllocationEntry[]
  /** The exact 201 body, replayed byte for byte. */
  response: string
  createdAt: Date
  receipt: { id: string; consumerEmail: string; payload: TaxReceiptPayload } | null
}

const findByKeysSql = new Map<number, string>()

/** Looks up several (organisation, key) pairs in one statement; one result per pair, in order. */
export async function findAllocationsByKeys(
  db: Kysely<Database>,
  pairs: readonly { organisationId: string; idempotencyKey: string }[],
): Promise<({ requestHash: Buffer; response: string } | undefined)[]> {
  if (pairs.length === 0) return []
  let text = findByKeysSql.get(pairs.length)
  if (text === undefined) {
    const tuples = pairs.map((_, i) => `($${2 * i + 1}::uuid, $${2 * i + 2})`).join(', ')
    text = `SELECT organisation_id, idempotency_key, request_hash, response FROM allocations
      WHERE (organisation_id, idempotency_key) IN (${tuples})`
    findByKeysSql.set(pairs.length, text)
  }
  const { rows } = await db.executeQuery<{ organisation_id: string; idempotency_key: string; request_hash: Uint8Array; response: string }>(
    CompiledQuery.raw(
      text,
      pairs.flatMap((p) => [p.organisationId, p.idempotencyKey]),
    ),
  )
  const found = new Map(
    rows.map((r) => [`${r.organisation_id}|${r.idempotency_key}`, { requestHash: Buffer.from(r.request_hash), response: r.response }]),
  )
  return pairs.map((p) => found.get(`${p.organisationId}|${p.idempotencyKey}`))
}

/**
 * Writes an allocation, its entries and its tax-receipt outbox row in ONE statement (the receipt
 * exists only if the allocation was inserted), unless the organisation already used the key: then
 * nothing is written and false is returned. The unique (organisation_id, idempotency_key) constraint
 * decides races: a concurrent duplicate waits for the first writer (bounded by lock_timeout) and then
 * inserts nothing. Allocations without a receipt go through insertAllocations.
 */
export async function insertAllocationWithReceipt(db: Kysely<Database>, a: NewAllocation): Promise<boolean> {
  if (!a.receipt) throw new Error('an allocation without a receipt is written with insertAllocations')
  const text = `WITH inserted AS (${insertAllocationsStatement(1)})
    INSERT INTO tax_receipts (id, allocation_id, organisation_id, consumer_email, payload, status, attempts, next_attempt_at, created_at)
    SELECT $14, inserted.id, $2, $15, $16::jsonb, 'pending', 0, $13, $13 FROM inserted
    RETURNING allocation_id AS id`
  const params = [...allocationParameters(a), a.receipt.id, a.receipt.consumerEmail, JSON.stringify(a.receipt.payload)]
  const { rows } = await db.executeQuery<{ id: string }>(CompiledQuery.raw(text, params))
  return rows.length === 1
}

const ALLOCATION_COLUMNS = 13
const insertAllocationsSql = new Map<number, string>()

/** INSERT … ON CONFLICT DO NOTHING RETURNING id for `count` allocations; built once per size. */
function insertAllocationsStatement(count: number): string {
  let text = insertAllocationsSql.get(count)
  if (text === undefined) {
    const rows = Array.from({ length: count }, (_, r) => {
      const p = (n: number) => `$${r * ALLOCATION_COLUMNS + n}`
      return (
        `(${p(1)}::uuid, ${p(2)}::uuid, ${p(3)}::uuid, ${p(4)}, ${p(5)}::bytea, ${p(6)}, ${p(7)}::numeric, ${p(8)}::numeric, ` +
        `${p(9)}, ${p(10)}::boolean, ${p(11)}::jsonb, ${p(12)}, ${p(13)}::timestamptz)`
      )
    })
    text = `INSERT INTO allocations (id, organisation_id, quote_id, idempotency_key, request_hash, currency_code,
        credits_amount, contribution_amount, tax_liability, issue_tax_receipt, entries, response, created_at)
      VALUES ${rows.join(', ')}
      ON CONFLICT (organisation_id, idempotency_key) DO NOTHING
      RETURNING id`
    insertAllocationsSql.set(count, text)
  }
  return text
}

/**
 * Writes several allocations (none with a tax receipt) in one statement; returns, per allocation,
 * whether it was written (false: its organisation had already used the key, possibly within this
 * very batch, in which case the first row wins).
 */
export async function insertAllocations(db: Kysely<Database>, rows: readonly NewAllocation[]): Promise<boolean[]> {
  if (rows.length === 0) return []
  if (rows.some((a) => a.receipt)) throw new Error('allocations with a tax receipt are written with insertAllocationWithReceipt')
  const { rows: written } = await db.executeQuery<{ id: string }>(
    CompiledQuery.raw(insertAllocationsStatement(rows.length), rows.flatMap(allocationParameters)),
  )
  const ids = new Set(written.map((r) => r.id))
  return rows.map((a) => ids.has(a.id))
}

/** The 13 column values of an allocation, in the order of the INSERT. */
const allocationParameters = (a: NewAllocation): unknown[] => [
  a.id,
  a.organisationId,
  a.quoteId,
  a.idempotencyKey,
  a.requestHash,
  a.currencyCode,
  a.creditsAmount,
  a.contributionAmount,
  a.taxLiability,
  a.issueTaxReceipt,
  JSON.stringify(a.entries),
  a.response,
  a.createdAt,
]

export interface AllocationRecord {
  id: string
  organisationId: string
  quoteId: string
  currencyCode: string
  taxLiability: 'platform' | 'organisation'
  response: string
  entries: StoredAllocationEntry[]
}

export async function findAllocationById(db: Kysely<Database>, id: string): Promise<AllocationRecord | undefined> {
  const row = await db
    .selectFrom('allocations')
    .select(['id', 'organisation_id', 'quote_id', 'currency_code', 'tax_liability', 'response', 'entries'])
    .where('id', '=', id)
    .executeTakeFirst()
  if (!row) return undefined
  return {
    id: row.id,
    organisationId: row.organisation_id,
    quoteId: row.quote_id,
    currencyCode: row.currency_code,
    taxLiability: row.tax_liability,
    response: row.response,
    entries: row.entries,
  }
}

/** Records the reversal unless the allocation already has one; true when this call recorded it. */
export async function insertReversal(
  db: Kysely<Database>,
  reversal: { id: string; allocationId: string; organisationId: string; response: string; createdAt: Date },
): Promise<boolean> {
  const result = await db
    .insertInto('allocation_reversals')
    .values({
      id: reversal.id,
      allocation_id: reversal.allocationId,
      organisation_id: reversal.organisationId,
      response: reversal.response,
      created_at: reversal.createdAt,
    })
    .onConflict((oc) => oc.column('allocation_id').doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
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
