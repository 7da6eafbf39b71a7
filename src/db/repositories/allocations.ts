import { CompiledQuery, sql, type Kysely } from 'kysely'
import type { Database, TaxReceiptPayload } from '../database.js'

export interface NewAllocationEntry {
  kind: 'credit' | 'contribution'
  projectId: string | null
  impactPartnerId: string
  impactAmount: string
  impactSalesTaxAmount: string
  impactSalesTaxRate: string
  serviceFeeAmount: string
  serviceFeeSalesTaxAmount: string
  serviceFeeSalesTaxRate: string
  quantityTonnes: string | null
}

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
  /** The exact 201 body, replayed byte for byte. */
  response: string
  createdAt: Date
  entries: readonly NewAllocationEntry[]
  receipt: { id: string; consumerEmail: string; payload: TaxReceiptPayload } | null
}

export type InsertOutcome =
  | { outcome: 'created' }
  | { outcome: 'existing'; requestHash: Buffer; response: string }
  /** Another request with the same key committed after this statement's snapshot (or rolled back). */
  | { outcome: 'raced' }

/**
 * Creates an allocation with its entries (and its tax-receipt outbox row) in ONE statement, unless
 * the organisation already used the idempotency key, in which case it returns the stored request hash
 * and response. The unique (organisation_id, idempotency_key) constraint decides races: a concurrent
 * duplicate waits for the first writer (bounded by lock_timeout) and then inserts nothing.
 */
export async function insertAllocationUnlessKeyUsed(db: Kysely<Database>, a: NewAllocation): Promise<InsertOutcome> {
  const params: unknown[] = [
    a.organisationId, a.idempotencyKey, a.id, a.quoteId, a.requestHash, a.currencyCode, a.creditsAmount,
    a.contributionAmount, a.taxLiability, a.issueTaxReceipt, a.response, a.createdAt,
  ]
  const values = a.entries.map((e, i) => {
    const base = params.length
    params.push(i, e.kind, e.projectId, e.impactPartnerId, e.impactAmount, e.impactSalesTaxAmount, e.impactSalesTaxRate,
      e.serviceFeeAmount, e.serviceFeeSalesTaxAmount, e.serviceFeeSalesTaxRate, e.quantityTonnes)
    const p = (n: number) => `$${base + n}`
    return `(${p(1)}::smallint, ${p(2)}::text, ${p(3)}::uuid, ${p(4)}::uuid, ${p(5)}::numeric, ${p(6)}::numeric, ${p(7)}::numeric, ` +
      `${p(8)}::numeric, ${p(9)}::numeric, ${p(10)}::numeric, ${p(11)}::numeric)`
  })
  if (values.length === 0) throw new Error('an allocation needs at least one entry')
  let receipt = ''
  if (a.receipt) {
    const base = params.length
    params.push(a.receipt.id, a.receipt.consumerEmail, JSON.stringify(a.receipt.payload))
    receipt = `,
    receipt AS (
      INSERT INTO tax_receipts (id, allocation_id, organisation_id, consumer_email, payload, status, attempts, next_attempt_at, created_at)
      SELECT $${base + 1}, i.id, $1, $${base + 2}, $${base + 3}::jsonb, 'pending', 0, $12, $12 FROM inserted i
    )`
  }
  const text = `
    WITH existing AS (
      SELECT request_hash, response FROM allocations WHERE organisation_id = $1 AND idempotency_key = $2
    ),
    inserted AS (
      INSERT INTO allocations (id, organisation_id, quote_id, idempotency_key, request_hash, currency_code, credits_amount,
        contribution_amount, tax_liability, issue_tax_receipt, response, created_at)
      SELECT $3, $1, $4, $2, $5, $6, $7::numeric, $8::numeric, $9, $10, $11, $12
      WHERE NOT EXISTS (SELECT 1 FROM existing)
      ON CONFLICT (organisation_id, idempotency_key) DO NOTHING
      RETURNING id
    ),
    entries AS (
      INSERT INTO allocation_entries (allocation_id, position, kind, project_id, impact_partner_id, impact_amount,
        impact_sales_tax_amount, impact_sales_tax_rate, service_fee_amount, service_fee_sales_tax_amount,
        service_fee_sales_tax_rate, quantity_tonnes)
      SELECT i.id, v.* FROM inserted i CROSS JOIN (VALUES ${values.join(', ')}) AS v
    )${receipt}
    SELECT 'created' AS outcome, NULL::bytea AS request_hash, NULL::text AS response FROM inserted
    UNION ALL
    SELECT 'existing', request_hash, response FROM existing`
  const { rows } = await db.executeQuery<{ outcome: 'created' | 'existing'; request_hash: Uint8Array | null; response: string | null }>(
    CompiledQuery.raw(text, params),
  )
  const row = rows[0]
  if (!row) return { outcome: 'raced' }
  if (row.outcome === 'created') return { outcome: 'created' }
  return { outcome: 'existing', requestHash: Buffer.from(row.request_hash ?? []), response: row.response ?? '' }
}

export async function findAllocationByKey(
  db: Kysely<Database>,
  organisationId: string,
  idempotencyKey: string,
): Promise<{ requestHash: Buffer; response: string } | undefined> {
  const row = await db.selectFrom('allocations').select(['request_hash', 'response'])
    .where('organisation_id', '=', organisationId).where('idempotency_key', '=', idempotencyKey).executeTakeFirst()
  return row ? { requestHash: Buffer.from(row.request_hash), response: row.response } : undefined
}

export interface AllocationRecord {
  id: string
  organisationId: string
  quoteId: string
  currencyCode: string
  taxLiability: 'platform' | 'organisation'
  response: string
  entries: {
    kind: 'credit' | 'contribution'
    projectId: string | null
    impactPartnerId: string
    impactAmount: string
    impactSalesTaxAmount: string
    impactSalesTaxRate: string
    serviceFeeAmount: string
    serviceFeeSalesTaxAmount: string
    serviceFeeSalesTaxRate: string
    quantityTonnes: string | null
  }[]
}

export async function findAllocationById(db: Kysely<Database>, id: string): Promise<AllocationRecord | undefined> {
  const allocation = await db.selectFrom('allocations')
    .select(['id', 'organisation_id', 'quote_id', 'currency_code', 'tax_liability', 'response'])
    .where('id', '=', id).executeTakeFirst()
  if (!allocation) return undefined
  const entries = await db.selectFrom('allocation_entries').selectAll().where('allocation_id', '=', id).orderBy('position').execute()
  return {
    id: allocation.id,
    organisationId: allocation.organisation_id,
    quoteId: allocation.quote_id,
    currencyCode: allocation.currency_code,
    taxLiability: allocation.tax_liability,
    response: allocation.response,
    entries: entries.map((e) => ({
      kind: e.kind,
      projectId: e.project_id,
      impactPartnerId: e.impact_partner_id,
      impactAmount: e.impact_amount,
      impactSalesTaxAmount: e.impact_sales_tax_amount,
      impactSalesTaxRate: e.impact_sales_tax_rate,
      serviceFeeAmount: e.service_fee_amount,
      serviceFeeSalesTaxAmount: e.service_fee_sales_tax_amount,
      serviceFeeSalesTaxRate: e.service_fee_sales_tax_rate,
      quantityTonnes: e.quantity_tonnes,
    })),
  }
}

/** Records the reversal unless the allocation already has one; true when this call recorded it. */
export async function insertReversal(
  db: Kysely<Database>,
  reversal: { id: string; allocationId: string; organisationId: string; response: string; createdAt: Date },
): Promise<boolean> {
  const result = await db.insertInto('allocation_reversals').values({
    id: reversal.id,
    allocation_id: reversal.allocationId,
    organisation_id: reversal.organisationId,
    response: reversal.response,
    created_at: reversal.createdAt,
  }).onConflict((oc) => oc.column('allocation_id').doNothing()).executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1
}

export async function findReversalResponse(db: Kysely<Database>, allocationId: string): Promise<string | undefined> {
  const row = await db.selectFrom('allocation_reversals').select('response').where('allocation_id', '=', allocationId).executeTakeFirst()
  return row?.response
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
