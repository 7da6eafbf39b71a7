// A new allocation is one statement: the write itself finds a key already used and answers with what was stored for it
// (src/db/repositories/allocations.ts, insertAllocations). These tests hold the replay guarantees of that order: a
// replay answers what its first request was answered even when pricing it again would refuse it, and the write tells
// a key taken before it from one taken beside it.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  findAllocationById,
  insertAllocations,
  insertAllocationWithReceipt,
  type Allocation,
  type AllocationDraft,
} from '../../src/db/repositories/allocations.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
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
    t.clock.advance(90 * DAY)
    const replay = await allocate(body, key)
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(first.body)
    const fresh = await allocate(body, randomUUID())
    expect(fresh.statusCode).toBe(404)
    expect(fresh.json().code).toBe('NOT_FOUND')
    expect(await keyRows(key)).toHaveLength(1)
  })

  it('answers IDEMPOTENCY_KEY_REUSED, not the pricing refusal, for a used key with a different request', async () => {
    const { quoteId, total } = await newQuote()
    const key = randomUUID()
    const body = { organisationId: org.organisationId, quoteId, credits: { amount: total } }
    expect((await allocate(body, key)).statusCode).toBe(201)
    // Alone, each of these is refused by pricing (400 or 404); with a used key, the key's answer comes first.
    for (const changed of [
      { ...body, currencyCode: 'EUR' },
      { ...body, quoteId: randomUUID() },
      { ...body, credits: { amount: total + 1000 }, contribution: { amount: 1, impactPartnerIds: [randomUUID()] } },
    ]) {
      expect((await allocate(changed, randomUUID())).statusCode).toBeGreaterThanOrEqual(400)
      const reused = await allocate(changed, key)
      expect(reused.statusCode, `${JSON.stringify(changed)} ${reused.body}`).toBe(422)
      expect(reused.json().code).toBe('IDEMPOTENCY_KEY_REUSED')
    }
    expect(await keyRows(key)).toHaveLength(1)
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

  it('answers a key used before the statement with the allocation stored for it, and writes nothing', async () => {
    const draft = retryDraft(stored)
    expect(await insertAllocations(t.db, [draft])).toEqual([{ written: false, stored }])
    expect(await findAllocationById(t.db, draft.allocation.id)).toBeUndefined()
    expect(await keyRows(stored.idempotencyKey)).toEqual([{ id: stored.id }])
  })

  it('writes the first of two drafts with one key in a batch; the second was taken beside it (nothing stored to see)', async () => {
    const key = randomUUID()
    const first = retryDraft(stored, key)
    const second = retryDraft(stored, key)
    const fresh = retryDraft(stored, randomUUID())
    expect(await insertAllocations(t.db, [first, second, fresh])).toEqual([
      { written: true },
      { written: false, stored: undefined },
      { written: true },
    ])
    expect(await keyRows(key)).toEqual([{ id: first.allocation.id }])
    expect(await findAllocationById(t.db, first.allocation.id)).toEqual(first.allocation)
    expect(await findAllocationById(t.db, fresh.allocation.id)).toEqual(fresh.allocation)
    // Retried, each of them finds what the batch stored.
    expect(await insertAllocations(t.db, [retryDraft(stored, key), retryDraft(stored, fresh.allocation.idempotencyKey)])).toEqual([
      { written: false, stored: first.allocation },
      { written: false, stored: fresh.allocation },
    ])
  })

  it('with a tax receipt, answers a used key the same way and queues no receipt', async () => {
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
    expect(await insertAllocationWithReceipt(t.db, draft, receipt)).toEqual({ written: false, stored })
    expect(await t.db.selectFrom('tax_receipts').select('id').where('id', '=', receipt.id).execute()).toEqual([])
  })
})
