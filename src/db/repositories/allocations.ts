// Funds allocations and their reversals. An allocation is one row: its entries are one jsonb array, its
// Idempotency-Key is unique per organisation, and a CHECK makes Postgres refuse entries that do not sum to
// the amounts paid. An allocation, its entries, its profit-share lines (a column of its row), its merchant's snapshot
// (merchant_snapshots, once per distinct merchant), its tax-receipt outbox row, its webhook event and its partner rows
// (impact_record_partners) are written by one statement.
import { CompiledQuery, sql, type Kysely } from 'kysely'
import { v5 as uuidv5 } from 'uuid'
import { formatMinorUnits, minorUnitsOf, parseDecimal, toMinorUnits } from '../../domain/money.js'
import { serviceFeeOf, type ProfitShareLine, type ProfitShareSplit } from '../../domain/profit-share.js'
import type { AllocationEntryAmounts, AllocationSplit, ContributionAllocationEntry, CreditAllocationEntry } from '../../domain/types.js'
import type {
  AllocationRow,
  Database,
  StoredAllocationEntries,
  StoredAllocationEntry,
  StoredAllocationLine,
  StoredEntryAmounts,
  StoredMerchant,
  StoredProfitShare,
  StoredProfitShareLine,
  TaxReceiptPayload,
} from '../database.js'
import { DEADLOCK_RUNS_MAX, errorCode, isDeadlockVictim } from '../failures.js'
import { prepared, preparedName } from '../prepared.js'
import { eventWritesText, insertWithEvents, type RecordEventDraft } from './webhooks.js'

export interface Allocation {
  id: string
  organisationId: string
  quoteId: string
  idempotencyKey: string
  /** SHA-256 of the canonical request, as hex: a replay must carry the same request. */
  requestHash: string
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

/** An id as a line string holds it: its 16 bytes in base64 without the padding (22 characters). */
const encodeId = (id: string): string => Buffer.from(id.replaceAll('-', ''), 'hex').toString('base64').slice(0, 22)

/**
 * A line's ids are the catalogue's (projects and partners), the same few in every allocation: each is encoded once.
 * Past COMPACT_IDS_MAX distinct ids the table starts again (a catalogue is far smaller).
 */
const compactIds = new Map<string, string>()
const COMPACT_IDS_MAX = 10_000
function compactId(id: string): string {
  let compact = compactIds.get(id)
  if (compact === undefined) {
    compact = encodeId(id)
    if (compactIds.size >= COMPACT_IDS_MAX) compactIds.clear()
    compactIds.set(id, compact)
  }
  return compact
}

/** An id of a line string as Postgres writes a uuid (lowercase, with dashes). */
function uuidOf(base64: string): string {
  const hex = Buffer.from(base64, 'base64').toString('hex')
  if (hex.length !== 32) throw new Error(`an allocation line's id is not 16 bytes: ${base64}`)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** A line's amounts in their stored order (database.ts, StoredAllocationEntry). */
const storedAmounts = (a: AllocationEntryAmounts): string =>
  `${a.impactAmount}|${a.impactSalesTaxRate}|${a.impactSalesTaxAmount}|${a.serviceFeeAmount}|${a.serviceFeeSalesTaxRate}|${a.serviceFeeSalesTaxAmount}`

/** The lines of a split as the allocation statement writes them: one string each (database.ts, StoredAllocationLine). */
const entriesOf = (split: AllocationSplit): StoredAllocationLine[] => [
  ...split.credits.map((c) => `cr|${compactId(c.impactPartnerId)}|${compactId(c.projectId)}|${c.quantityTonnes}|${storedAmounts(c)}`),
  ...split.contributions.map((c) => `co|${compactId(c.impactPartnerId)}|||${storedAmounts(c)}`),
]

/** A line written as one string, as the array it stands for (what allocation_lines gives SQL). */
function lineOf(line: StoredAllocationLine): StoredAllocationEntry {
  const v = line.split('|')
  if (v.length !== 10 || (v[0] !== 'cr' && v[0] !== 'co')) throw new Error(`an allocation line of an unknown shape: ${line}`)
  const amounts = v.slice(4) as StoredEntryAmounts
  return v[0] === 'cr'
    ? ['cr', uuidOf(v[1] as string), uuidOf(v[2] as string), v[3] as string, ...amounts]
    : ['co', uuidOf(v[1] as string), null, null, ...amounts]
}

/**
 * Entries are stored exactly as the domain formatted them (jsonb keeps strings as written). Read by position into
 * object literals, keyed in the order the presenters have always received them: a page reads hundreds of lines, and
 * destructuring with rest elements built two arrays per line. A line is an array, or (since migration 003100) a string.
 */
export const splitOf = (currencyCode: string, entries: StoredAllocationEntries): AllocationSplit => {
  const credits: CreditAllocationEntry[] = []
  const contributions: ContributionAllocationEntry[] = []
  for (const stored of entries) {
    const e = typeof stored === 'string' ? lineOf(stored) : stored
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

/** An allocation row with its merchant snapshot's body (NULL when it names none). */
type AllocationWithMerchantRow = AllocationRow & { merchant_body: StoredMerchant | null }

const allocationFromRow = (row: AllocationWithMerchantRow): Allocation => {
  const split = splitOf(row.currency_code, row.entries)
  return {
    id: row.id,
    organisationId: row.organisation_id,
    quoteId: row.quote_id,
    idempotencyKey: row.idempotency_key,
    requestHash: Buffer.from(row.request_hash).toString('hex'),
    currencyCode: row.currency_code,
    creditsAmount: row.credits_amount,
    contributionAmount: row.contribution_amount,
    taxLiability: row.tax_liability,
    issueTaxReceipt: row.issue_tax_receipt,
    split,
    createdAt: row.created_at,
    collectionOrganisationId: row.collection_organisation_id,
    consumerReference: row.consumer_reference,
    merchant: row.merchant ?? row.merchant_body,
    profitShare: profitShareOf(row.profit_share, split),
  }
}

/** Per merchant object (a quote's request keeps one, and a stored quote never changes): hashed once, not per allocation. */
const merchantSnapshotIds = new WeakMap<StoredMerchant, string>()

/** The namespace of merchant snapshot ids (a fixed, random UUID: the name-based ids below are Canopy's own). */
const MERCHANT_SNAPSHOT_NAMESPACE = '6f1c2b8e-5d4a-4e0f-9a37-2c81d5b0e944'

/**
 * The id of a merchant's row in merchant_snapshots: a name-based UUID (v5) of its JSON, so the same content always
 * names the same row and a merchant's allocations share one. A merchant sent with its fields in another order makes a
 * second row of equal content: harmless.
 */
export function merchantSnapshotIdOf(merchant: StoredMerchant): string {
  let id = merchantSnapshotIds.get(merchant)
  if (id === undefined) {
    id = uuidv5(JSON.stringify(merchant), MERCHANT_SNAPSHOT_NAMESPACE)
    merchantSnapshotIds.set(merchant, id)
  }
  return id
}

/**
 * The CTE that writes the partner rows of the records `written` returns (docs/reconciliation.md, "Storage and
 * indexes"): one per distinct impact partner of the record's lines, so they exist only if the record was written.
 * `written` returns the allocations' rows (with their entries), or the reversals' (lines read from their allocation).
 * An allocation's rows leave allocation_id and allocation_created_at NULL: they are the record's own id and time
 * (bytes every allocation would write for nothing); a record of the top of its tree leaves organisation_id NULL too
 * (it is root_organisation_id). A line's impact partner is its element 1 (database.ts,
 * StoredAllocationEntry), read through allocation_lines (a line may be a string). Raw SQL: a data-modifying CTE over the
 * insert's RETURNING and allocation_lines. Plain text (no parameters), so that it can be part of a prepared text.
 */
const partnerRowsText = (of: 'allocations' | 'reversals') => `
  written_partners AS (
    INSERT INTO impact_record_partners (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id,
      allocation_created_at)
    SELECT DISTINCT (e.entry->>1)::uuid, w.root_organisation_id, w.created_at, w.id, nullif(w.organisation_id, w.root_organisation_id),
      ${of === 'allocations' ? 'NULL::uuid, NULL::timestamptz' : 'w.allocation_id, w.allocation_created_at'}
    FROM written w
    ${of === 'allocations' ? '' : 'JOIN allocations a ON a.id = w.allocation_id AND a.created_at = w.allocation_created_at'}
    CROSS JOIN LATERAL allocation_lines(${of === 'allocations' ? 'w.entries' : 'a.entries'}) AS e(entry)
  )`

/** The columns of an allocation row the allocation statement writes (all but the top of its tree). */
const ALLOCATION_COLUMNS =
  'id, organisation_id, quote_id, idempotency_key, request_hash, currency_code, credits_amount, contribution_amount, tax_liability, ' +
  'issue_tax_receipt, entries, created_at, collection_organisation_id, consumer_reference, merchant_id, profit_share'

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
    .leftJoin('merchant_snapshots as m', 'm.id', 'a.merchant_id')
    .selectAll('a')
    .select('m.body as merchant_body')
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

/** An item of an allocation write: the allocation and the webhook event of its creation. */
export interface AllocationDraft {
  allocation: Allocation
  event: RecordEventDraft
}

/**
 * The allocation statement: one text for any number of allocations (their rows are one JSON parameter), so every
 * connection parses it once and Postgres keeps one plan for it (src/db/prepared.ts): parsing and planning these CTEs
 * over partitioned tables cost Postgres more than running them. That plan is made once, for any batch, so nothing in it
 * reads a large table by a join the planner could turn into a scan: each key is looked up by a subquery kept
 * correlated (`OFFSET 0`: an index probe per draft, never a hash join over the keys table), and the walk up the tree
 * for webhook endpoints looks each parent up by its id (webhooks.ts, eventWritesText). Its CTEs:
 * - `allocation_drafts`: the rows, in order;
 * - `keyed`: the keys this statement took: those not already taken, the first row of each key within the statement,
 *   in key order so that two statements wait for each other's keys in one order and never deadlock. A plain INSERT,
 *   not ON CONFLICT: a speculative insertion writes a second WAL record per key (its confirmation, 48 B per
 *   allocation, docs/write-costs.md). A key a concurrent writer takes after this statement began makes the INSERT wait
 *   for that writer, bounded by lock_timeout, and then fail on the keys' primary key: the whole statement writes
 *   nothing and runs again (writeAllocations), when the key is seen taken;
 * - `merchants`: the merchants' snapshots, ON CONFLICT DO NOTHING: one row per content, never changed, so the one an
 *   allocation names exists once it is committed;
 * - `written`: the allocations of the keys taken, each with the top of its tree found by the INSERT itself; then their
 *   partner rows, and their webhook events and deliveries.
 * With a receipt, one allocation and its tax-receipt outbox row.
 */
const allocationStatementText = (withReceipt: boolean): string => `WITH RECURSIVE
    allocation_drafts AS (
      SELECT (r->>0)::uuid AS id, (r->>1)::uuid AS organisation_id, (r->>2)::uuid AS quote_id, r->>3 AS idempotency_key,
        decode(r->>4, 'hex') AS request_hash, r->>5 AS currency_code, (r->>6)::numeric AS credits_amount,
        (r->>7)::numeric AS contribution_amount, r->>8 AS tax_liability, (r->>9)::boolean AS issue_tax_receipt, r->10 AS entries,
        (r->>11)::timestamptz AS created_at, (r->>12)::uuid AS collection_organisation_id, r->>13 AS consumer_reference,
        (r->>14)::uuid AS merchant_id, r->15 AS merchant, nullif(r->16, 'null') AS profit_share, (r->>17)::uuid AS event_id,
        (r->>18)::numeric AS quote_co2e_grams, n
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(r, n)
    ),
    keyed AS (
      INSERT INTO allocation_idempotency_keys (organisation_id, idempotency_key, allocation_id, allocation_created_at)
      SELECT DISTINCT ON (d.organisation_id, d.idempotency_key) d.organisation_id, d.idempotency_key, d.id, d.created_at
      FROM allocation_drafts d
      WHERE NOT EXISTS (
        SELECT FROM allocation_idempotency_keys k
        WHERE k.organisation_id = d.organisation_id AND k.idempotency_key = d.idempotency_key OFFSET 0
      )
      ORDER BY d.organisation_id, d.idempotency_key, d.n
      RETURNING allocation_id
    ),
    merchants AS (
      INSERT INTO merchant_snapshots (id, body)
      SELECT DISTINCT ON (merchant_id) merchant_id, merchant FROM allocation_drafts WHERE merchant_id IS NOT NULL
      ON CONFLICT DO NOTHING
    ),
    written AS (
      INSERT INTO allocations (${ALLOCATION_COLUMNS}, root_organisation_id)
      SELECT ${ALLOCATION_COLUMNS}, organisation_root(organisation_id)
      FROM allocation_drafts WHERE id IN (SELECT allocation_id FROM keyed)
      RETURNING id, root_organisation_id, organisation_id, created_at, entries
    ),${partnerRowsText('allocations')},${
      withReceipt
        ? `
    written_receipt AS (
      INSERT INTO tax_receipts (id, allocation_id, organisation_id, consumer_email, payload, status, attempts, next_attempt_at, created_at)
      SELECT $2::uuid, w.id, w.organisation_id, $3::text, $4::jsonb, 'pending', 0, w.created_at, w.created_at
      FROM written w
    ),`
        : ''
    }
    event_drafts AS (
      SELECT event_id AS id, id AS source_id, organisation_id, 'allocation.created'::text AS type, quote_co2e_grams, created_at
      FROM allocation_drafts
    ),${eventWritesText('written')}
    SELECT id, (SELECT count(*) FROM written_deliveries)::int AS deliveries FROM written`

const INSERT_ALLOCATIONS = prepared(allocationStatementText(false))
const INSERT_ALLOCATION_WITH_RECEIPT = prepared(allocationStatementText(true))

/** The names the allocation statements run under: on the wire, a connection sends their text once, then these. */
export const ALLOCATION_STATEMENT_NAMES: readonly string[] = [INSERT_ALLOCATIONS, INSERT_ALLOCATION_WITH_RECEIPT].flatMap(
  (text) => preparedName(text) ?? [],
)

/**
 * The statement's one parameter: a JSON array with, per allocation, an array of the columns of `allocation_drafts` in
 * its order. One jsonb parameter rather than an array per column: Postgres estimates its rows alike whether it plans for
 * these values or for any, so the plan it keeps for the statement is the one it reuses (an array's length it would see).
 */
function draftsParameter(items: readonly AllocationDraft[]): string {
  return JSON.stringify(
    items.map(({ allocation: a, event }) => [
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
      entriesOf(a.split),
      a.createdAt.toISOString(),
      a.collectionOrganisationId,
      a.consumerReference,
      a.merchant === null ? null : merchantSnapshotIdOf(a.merchant),
      a.merchant,
      a.profitShare === null ? null : encodeProfitShare(a.profitShare, a.currencyCode),
      event.id,
      event.quoteCo2eGrams,
    ]),
  )
}

/** What an allocation statement wrote: per allocation, whether it was written; and how many webhook deliveries. */
export interface AllocationWrites {
  written: boolean[]
  /** Deliveries of the written allocations' events (0: no endpoint listens, and the webhook worker need not look). */
  deliveries: number
}

/**
 * A key of the statement taken by a concurrent writer after the statement began: its INSERT waited for that writer and
 * then met the keys' primary key. The statement failed as a whole, so nothing of it was written.
 */
const isKeyTakenMeanwhile = (error: unknown): boolean =>
  errorCode(error) === '23505' && (error as { constraint?: unknown }).constraint === 'allocation_idempotency_keys_pkey'

async function writeAllocations(
  db: Kysely<Database>,
  text: string,
  parameters: unknown[],
  items: readonly AllocationDraft[],
): Promise<AllocationWrites> {
  let deadlocks = 0
  for (let attempt = 1; ; attempt++) {
    try {
      const { rows } = await db.executeQuery<{ id: string; deliveries: number }>(CompiledQuery.raw(text, parameters))
      const written = new Set(rows.map((r) => r.id))
      return { written: items.map((i) => written.has(i.allocation.id)), deliveries: rows[0]?.deliveries ?? 0 }
    } catch (error) {
      // The statement wrote nothing; run it again. Each such failure follows another writer's commit of one of its keys,
      // which the next run sees taken and leaves out, so a statement of n allocations runs at most n + 1 times.
      if (attempt <= items.length && isKeyTakenMeanwhile(error)) continue
      // Rolled back to break a deadlock (partition maintenance's DDL): runs again, at most DEADLOCK_RUNS_MAX times (not
      // within a transaction, which the deadlock aborted whole: runAgainOnDeadlock in src/db/failures.ts).
      if (!db.isTransaction && isDeadlockVictim(error) && ++deadlocks < DEADLOCK_RUNS_MAX) continue
      throw error
    }
  }
}

/**
 * Writes several allocations (none with a tax receipt), each with its webhook event and the event's deliveries and its
 * partner rows, in one statement; returns, per allocation, whether it was written (false: its organisation had already
 * used the key, possibly within this very batch, in which case the first row wins, and no event or partner row is
 * written for it).
 */
export function insertAllocations(db: Kysely<Database>, items: readonly AllocationDraft[]): Promise<AllocationWrites> {
  if (items.length === 0) return Promise.resolve({ written: [], deliveries: 0 })
  return writeAllocations(db, INSERT_ALLOCATIONS, [draftsParameter(items)], items)
}

/** Writes an allocation as insertAllocations does, with its tax-receipt outbox row (written only with the allocation). */
export function insertAllocationWithReceipt(
  db: Kysely<Database>,
  item: AllocationDraft,
  receipt: NewTaxReceipt,
): Promise<AllocationWrites> {
  const parameters = [draftsParameter([item]), receipt.id, receipt.consumerEmail, JSON.stringify(receipt.payload)]
  return writeAllocations(db, INSERT_ALLOCATION_WITH_RECEIPT, parameters, [item])
}

export async function findAllocationById(db: Kysely<Database>, id: string): Promise<Allocation | undefined> {
  const row = await db
    .selectFrom('allocations as a')
    .leftJoin('merchant_snapshots as m', 'm.id', 'a.merchant_id')
    .selectAll('a')
    .select('m.body as merchant_body')
    .where('a.id', '=', id)
    .executeTakeFirst()
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
  const written = await insertWithEvents(db, { ctes }, [event], sql.raw(partnerRowsText('reversals')))
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
