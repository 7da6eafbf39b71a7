// A new allocation is one statement: the write itself finds a key already used (src/db/repositories/allocations.ts,
// insertAllocations), and only a key this process has seen used is looked up first (src/services/allocation-store.ts).
// These tests hold the replay guarantees of that order: a replay answers what its first request was answered, even when
// pricing it again would refuse it, whichever process wrote it.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  findAllocationById,
  insertAllocations,
  insertAllocationWithReceipt,
  type Allocation,
  type AllocationDraft,
} from '../../src/db/repositories/allocations.js'
import { AllocationStore } from '../../src/services/allocation-store.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

const DAY = 86_400_000

let t: TestApp
let org: OrgFixture

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_WORKER: 'false' })
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db)
})
afterAll(() => t.close())

const newQuote = async (): Promise<{ quoteId: string; total: number }> => {
  const quote = (await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))).json()
  return { quoteId: quote.quoteId, total: quote.credits.amounts.total }
}
const allocate = (body: Record<string, unknown>, key: string) =>
  client(t.app, org.apiKey).post('/funds/allocations', body, { 'idempotency-key': key })
/** Deadlocks Postgres has broken in this database (pg_stat_database; the statistics of this backend, read fresh). */
const deadlocks = async (): Promise<number> => {
  await sql`SELECT pg_stat_clear_snapshot()`.execute(t.db)
  return (
    (await sql<{ n: number }>`SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()`.execute(t.db)).rows[0]
      ?.n ?? 0
  )
}
const keyRows = (key: string) => t.db.selectFrom('allocations').select('id').where('idempotency_key', '=', key).execute()

/** A new draft of `stored` (new ids, the same organisation, key and amounts): what a retry of its request would write. */
const retryDraft = (stored: Allocation, idempotencyKey = stored.idempotencyKey): AllocationDraft => {
  const id = randomUUID()
  return {
    allocation: { ...stored, id, idempotencyKey, createdAt: new Date(stored.createdAt.getTime() + 1_000) },
    event: {
      id: randomUUID(),
      type: 'allocation.created',
      organisationId: stored.organisationId,
      sourceId: id,
      createdAt: stored.createdAt,
      quoteCo2eGrams: null,
    },
  }
}

describe('replays, now that the write comes first', () => {
  it('answers a replay whose quote is past retention with the original 201, and refuses a new key for it', async () => {
    const { quoteId, total } = await newQuote()
    const body = { organisationId: org.organisationId, quoteId, credits: { amount: total } }
    const key = randomUUID()
    const first = await allocate(body, key)
    expect(first.statusCode).toBe(201)
    const stored = (await findAllocationById(t.db, first.json().fundsAllocationId)) as Allocation
    // Another process's allocation of the same request: a key this process has never seen used.
    const elsewhere = retryDraft(stored, randomUUID())
    expect((await insertAllocations(t.db, [elsewhere])).written).toEqual([true])
    t.clock.advance(90 * DAY)
    for (const [k, id] of [
      [key, stored.id],
      [elsewhere.allocation.idempotencyKey, elsewhere.allocation.id],
    ] as const) {
      const replay = await allocate(body, k)
      expect(replay.statusCode, replay.body).toBe(201)
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(replay.json().fundsAllocationId).toBe(id)
    }
    // The very bytes and type of the first answer (this process keeps its serialized body).
    const again = await allocate(body, key)
    expect(again.body).toBe(first.body)
    expect(again.headers['content-type']).toBe(first.headers['content-type'])
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8')
    const fresh = await allocate(body, randomUUID())
    expect(fresh.statusCode).toBe(404)
    expect(fresh.json().code).toBe('NOT_FOUND')
    expect(await keyRows(key)).toHaveLength(1)
  })

  it('answers IDEMPOTENCY_KEY_REUSED, not the pricing refusal, for a used key with a different request', async () => {
    const { quoteId, total } = await newQuote()
    const body = { organisationId: org.organisationId, quoteId, credits: { amount: total } }
    const key = randomUUID()
    expect((await allocate(body, key)).statusCode).toBe(201)
    const stored = (await findAllocationById(t.db, (await allocate(body, key)).json().fundsAllocationId)) as Allocation
    // Used by this process, and by another one (this process has not seen it used).
    const elsewhere = retryDraft(stored, randomUUID()).allocation.idempotencyKey
    expect((await insertAllocations(t.db, [retryDraft(stored, elsewhere)])).written).toEqual([true])
    // Alone, each of these is refused by pricing (400 or 404); with a used key, the key's answer comes first.
    for (const changed of [
      { ...body, currencyCode: 'EUR' },
      { ...body, quoteId: randomUUID() },
      { ...body, credits: { amount: total + 1000 }, contribution: { amount: 1, impactPartnerIds: [randomUUID()] } },
    ]) {
      expect((await allocate(changed, randomUUID())).statusCode).toBeGreaterThanOrEqual(400)
      for (const k of [key, elsewhere]) {
        const reused = await allocate(changed, k)
        expect(reused.statusCode, `${JSON.stringify(changed)} ${reused.body}`).toBe(422)
        expect(reused.json().code).toBe('IDEMPOTENCY_KEY_REUSED')
      }
    }
    expect(await keyRows(key)).toHaveLength(1)
    expect(await keyRows(elsewhere)).toHaveLength(1)
  })

  it('answers a replay of a key used by another process, priced again, with the stored allocation', async () => {
    const { quoteId, total } = await newQuote()
    const body = { organisationId: org.organisationId, quoteId, credits: { amount: total } }
    const first = await allocate(body, randomUUID())
    const stored = (await findAllocationById(t.db, first.json().fundsAllocationId)) as Allocation
    const elsewhere = retryDraft(stored, randomUUID())
    expect((await insertAllocations(t.db, [elsewhere])).written).toEqual([true])
    const replay = await allocate(body, elsewhere.allocation.idempotencyKey)
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json().fundsAllocationId).toBe(elsewhere.allocation.id)
    expect(await keyRows(elsewhere.allocation.idempotencyKey)).toEqual([{ id: elsewhere.allocation.id }])
  })
})

describe('the allocations a process keeps for replays', () => {
  it('knows a key it wrote used, reads it once for a replay, then answers from memory; any other key from the database', async () => {
    const { quoteId, total } = await newQuote()
    const created = await allocate({ organisationId: org.organisationId, quoteId, credits: { amount: total } }, randomUUID())
    const stored = (await findAllocationById(t.db, created.json().fundsAllocationId)) as Allocation
    const writer = new AllocationStore(t.db)
    const draft = retryDraft(stored, randomUUID())
    expect(await writer.insert(draft, null)).toEqual({ written: true, deliveries: false })
    const ref = { organisationId: org.organisationId, idempotencyKey: draft.allocation.idempotencyKey }
    // Known used at once (a replay skips pricing), but not kept: its first replay reads it, one lookup, then none.
    expect(writer.isKnownUsed(ref)).toBe(true)
    // Spied on: the batched lookup, the only way a store reads a key from the database.
    const lookups = vi.spyOn(writer['keys'], 'submit')
    const replayed = await writer.findByKey(ref)
    expect(replayed).toEqual({ ...draft.allocation, merchant: replayed?.merchant ?? null })
    expect(await writer.findByKey(ref)).toBe(replayed)
    expect(lookups).toHaveBeenCalledTimes(1)

    // Another process: a lookup, once; then from its memory too. What it reads is what the first process wrote.
    const other = new AllocationStore(t.db)
    const otherLookups = vi.spyOn(other['keys'], 'submit')
    const read = await other.findByKey(ref)
    expect(read).toEqual({ ...draft.allocation, merchant: read?.merchant ?? null })
    expect(await other.findByKey(ref)).toBe(read)
    expect(otherLookups).toHaveBeenCalledTimes(1)
    expect(other.isKnownUsed(ref)).toBe(true)

    // A key nobody used is looked up every time (it may be used by another process at any moment).
    const unused = { organisationId: org.organisationId, idempotencyKey: randomUUID() }
    expect(await writer.findByKey(unused)).toBeUndefined()
    expect(await writer.findByKey(unused)).toBeUndefined()
    expect(lookups).toHaveBeenCalledTimes(3)
  })
})

describe('insertAllocations', () => {
  let stored: Allocation

  beforeAll(async () => {
    const { quoteId, total } = await newQuote()
    const created = await allocate({ organisationId: org.organisationId, quoteId, credits: { amount: total } }, randomUUID())
    expect(created.statusCode).toBe(201)
    stored = (await findAllocationById(t.db, created.json().fundsAllocationId)) as Allocation
  })

  it('writes nothing for a key already used', async () => {
    const draft = retryDraft(stored)
    expect(await insertAllocations(t.db, [draft])).toEqual({ written: [false], deliveries: 0 })
    expect(await findAllocationById(t.db, draft.allocation.id)).toBeUndefined()
    expect(await keyRows(stored.idempotencyKey)).toEqual([{ id: stored.id }])
  })

  it('writes the first of two drafts with one key in a batch, and every other draft of it', async () => {
    const key = randomUUID()
    const first = retryDraft(stored, key)
    const second = retryDraft(stored, key)
    const fresh = retryDraft(stored, randomUUID())
    expect(await insertAllocations(t.db, [first, second, retryDraft(stored), fresh])).toEqual({
      written: [true, false, false, true],
      deliveries: 0,
    })
    expect(await keyRows(key)).toEqual([{ id: first.allocation.id }])
    expect(await findAllocationById(t.db, first.allocation.id)).toEqual(first.allocation)
    expect(await findAllocationById(t.db, fresh.allocation.id)).toEqual(fresh.allocation)
  })

  it.runIf(onPostgres())(
    'a key another writer takes meanwhile: the statement waits for it, then runs again and writes the rest',
    async () => {
      const key = randomUUID()
      const [winner, loser, other] = [retryDraft(stored, key), retryDraft(stored, key), retryDraft(stored, randomUUID())]
      let release = (): void => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      let wrote = (): void => {}
      const written = new Promise<void>((resolve) => (wrote = resolve))
      const first = t.db.transaction().execute(async (trx) => {
        expect(await insertAllocations(trx, [winner])).toEqual({ written: [true], deliveries: 0 })
        wrote()
        await held
      })
      await written
      // Not committed yet: the second statement sees the key free, and its INSERT waits for the first writer.
      const racing = insertAllocations(t.db, [loser, other])
      const waiting = async (): Promise<number> =>
        (
          await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(t.db)
        ).rows[0]?.n ?? 0
      for (let i = 0; i < 200 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 10))
      expect(await waiting()).toBe(1)
      release()
      await first
      expect(await racing).toEqual({ written: [false, true], deliveries: 0 })
      expect(await keyRows(key)).toEqual([{ id: winner.allocation.id }])
      expect(await findAllocationById(t.db, loser.allocation.id)).toBeUndefined()
      expect(await findAllocationById(t.db, other.allocation.id)).toEqual(other.allocation)
    },
  )

  it.runIf(onPostgres())(
    "a statement Postgres makes a deadlock's victim (partition maintenance's locks) runs again and writes",
    async () => {
      // What creating a month of webhook_deliveries does: the parent locked, then the table its foreign key names.
      const draft = retryDraft(stored, randomUUID())
      let locked = (): void => {}
      const deliveriesLocked = new Promise<void>((resolve) => (locked = resolve))
      let proceed = (): void => {}
      const statementWaits = new Promise<void>((resolve) => (proceed = resolve))
      const maintenance = t.db.transaction().execute(async (trx) => {
        // Both sides' deadlock checks would otherwise fire within milliseconds of each other (deadlock_timeout after
        // each began to wait), and on a busy machine either backend may run its check first: this side's comes later.
        await sql`SET LOCAL deadlock_timeout = '5s'`.execute(trx)
        await sql`LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE`.execute(trx)
        locked()
        await statementWaits
        await sql`LOCK TABLE webhook_events IN SHARE ROW EXCLUSIVE MODE`.execute(trx)
      })
      await deliveriesLocked
      const writing = insertAllocations(t.db, [draft])
      const waiting = async (): Promise<number> =>
        (
          await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(t.db)
        ).rows[0]?.n ?? 0
      for (let i = 0; i < 200 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 10))
      expect(await waiting()).toBe(1)
      const deadlocksBefore = await deadlocks()
      proceed()
      await maintenance
      expect(await writing).toEqual({ written: [true], deliveries: 0 })
      expect(await findAllocationById(t.db, draft.allocation.id)).toEqual(draft.allocation)
      // It was the deadlock's victim (the first to wait is the first to look for one), and ran again.
      expect(await deadlocks()).toBe(deadlocksBefore + 1)
    },
  )

  it('with a tax receipt, writes nothing for a used key and queues no receipt', async () => {
    const draft = retryDraft(stored)
    const receipt = {
      id: randomUUID(),
      consumerEmail: 'someone@example.com',
      payload: {
        fundsAllocationId: draft.allocation.id,
        organisationName: 'x',
        currencyCode: 'GBP',
        totalPaid: '1.00',
        contributions: [],
        allocatedAt: draft.allocation.createdAt.toISOString(),
      },
    }
    expect(await insertAllocationWithReceipt(t.db, draft, receipt)).toEqual({ written: [false], deliveries: 0 })
    expect(await t.db.selectFrom('tax_receipts').select('id').where('id', '=', receipt.id).execute()).toEqual([])
  })
})

describe('waking the webhook worker', () => {
  it('only for a statement that wrote deliveries: an allocation nobody listens for wakes nothing', async () => {
    const wake = vi.spyOn(t.app.webhooks, 'wake')
    try {
      const quiet = await newQuote()
      const res = await allocate(
        { organisationId: org.organisationId, quoteId: quiet.quoteId, credits: { amount: quiet.total } },
        randomUUID(),
      )
      expect(res.statusCode).toBe(201)
      expect(wake).not.toHaveBeenCalled()

      const endpoint = await client(t.app, org.apiKey).post('/v3/webhook-endpoints', {
        organisationId: org.organisationId,
        url: 'https://hooks.example.com/canopy',
      })
      expect(endpoint.statusCode, endpoint.body).toBe(201)
      wake.mockClear()
      const heard = await newQuote()
      const key = randomUUID()
      const body = { organisationId: org.organisationId, quoteId: heard.quoteId, credits: { amount: heard.total } }
      expect((await allocate(body, key)).statusCode).toBe(201)
      expect(wake).toHaveBeenCalledTimes(1)
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
        WHERE e.source_id = ${(await allocate(body, key)).json().fundsAllocationId}::uuid`.execute(t.db)
      expect(rows[0]?.n).toBe(1)
      // The replay wrote nothing and woke nothing.
      expect(wake).toHaveBeenCalledTimes(1)
      await client(t.app, org.apiKey).patch(`/v3/webhook-endpoints/${endpoint.json().id}`, { status: 'disabled' })
    } finally {
      wake.mockRestore()
    }
  })
})
