// Allocation and reversal events: written with their allocation or reversal (never for a replay or a refused
// write), delivered to the endpoints of the organisation and of its ancestors, verified with the standardwebhooks
// library and (ekko format) with an HMAC recomputed here.
import { createHmac, randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { startReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const LOOPBACK_ENV = { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_WORKER: 'false' }

let t: TestApp
let platform: OrgFixture
let merchant: OrgFixture
let other: OrgFixture
let receiver: WebhookReceiver
let quoteId: string
/** The quote's footprint in grams CO2e, as ekko-format bodies carry it. */
let quoteGrams: number
const endpoints: Record<string, { id: string; secret: string }> = {}

const allocate = (key = merchant.apiKey, idempotencyKey: string = randomUUID(), org = merchant.organisationId, quote = () => quoteId) =>
  client(t.app, key).post(
    '/funds/allocations',
    { organisationId: org, quoteId: quote(), credits: { amount: 0.28 } },
    { 'idempotency-key': idempotencyKey },
  )

const eventCount = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM webhook_events`.execute(t.db)).rows[0]!.n)

const receivedFor = (id: string): ReceivedWebhook[] => receiver.received.filter((r) => r.headers['webhook-id'] === id)

beforeAll(async () => {
  t = await createTestApp(LOOPBACK_ENV)
  await importDemoCatalogue(t.db)
  platform = await createOrg(t.db)
  merchant = await createOrg(t.db, { parentId: platform.organisationId })
  other = await createOrg(t.db)
  receiver = await startReceiver((r) => ({ status: r.body.includes('"IMPACT_PAYMENT') ? 204 : 200 }))
  const create = async (name: string, key: string, body: Record<string, unknown>) => {
    const res = await client(t.app, key).post('/v3/webhook-endpoints', { url: `${receiver.url}/${name}`, ...body })
    expect(res.statusCode).toBe(201)
    endpoints[name] = res.json()
  }
  await create('platform', platform.apiKey, { organisationId: platform.organisationId })
  await create('merchant-ekko', merchant.apiKey, { organisationId: merchant.organisationId, format: 'ekko' })
  await create('reversals-only', merchant.apiKey, { organisationId: merchant.organisationId, enabledEvents: ['allocation.reversed'] })
  await create('other', other.apiKey, { organisationId: other.organisationId })
  const quote = (await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))).json()
  quoteId = quote.quoteId
  quoteGrams = Number(quote.footprint.co2eGrams)
})
afterAll(async () => {
  await receiver.close()
  await t.close()
})

describe('allocation events', () => {
  it('delivers allocation.created to the organisation and its ancestors, signed, byte for byte, with the record as data', async () => {
    const res = await allocate()
    expect(res.statusCode).toBe(201)
    const allocation = res.json()
    // The event is a small row naming its record; its bodies are rendered when its deliveries are first claimed.
    const [event] = (
      await sql<{ id: string; body: string | null; source_id: string }>`
        SELECT id, body, source_id FROM webhook_events ORDER BY created_at DESC LIMIT 1`.execute(t.db)
    ).rows
    expect(event).toMatchObject({ body: null, source_id: allocation.fundsAllocationId })
    await t.app.webhooks.runOnce()
    const got = receivedFor(event!.id)
    expect(got).toHaveLength(2)

    // Each delivery keeps the bytes it sent, in its endpoint's format.
    const stored = new Map(
      (
        await sql<{
          endpoint_id: string
          body: string
        }>`SELECT endpoint_id, body FROM webhook_deliveries WHERE event_id = ${event!.id}`.execute(t.db)
      ).rows.map((r) => [r.endpoint_id, r.body]),
    )
    const standard = got.find((r) => !r.headers.signature)!
    expect(standard.body).toBe(stored.get(endpoints.platform!.id))
    const payload = new Webhook(endpoints.platform!.secret).verify(standard.body, standard.headers as Record<string, string>) as {
      data: unknown
    }
    expect(payload).toMatchObject({ id: event!.id, type: 'allocation.created', organisationId: merchant.organisationId })
    expect(payload.data).toMatchObject({
      fundsAllocationId: allocation.fundsAllocationId,
      quoteId,
      reversal: false,
      fundsOrganisationId: merchant.organisationId,
      collectionOrganisationId: merchant.organisationId,
      fundsCurrencyCode: 'GBP',
      amounts: { total: 0.28, impact: 0.19, impactTax: 0.04, serviceFee: 0.04, serviceFeeTax: 0.01 },
    })
    // data is the record the reconciliation read shows, exactly.
    const read = await client(t.app, merchant.apiKey).get(`/v3/funds/allocations/${allocation.fundsAllocationId}/impact`)
    expect(read.statusCode).toBe(200)
    expect(payload.data).toEqual(read.json())
    // Any flipped byte is refused.
    expect(() =>
      new Webhook(endpoints.platform!.secret).verify(standard.body.replace('0.28', '0.29'), standard.headers as Record<string, string>),
    ).toThrow()

    const ekko = got.find((r) => r.headers.signature)!
    expect(ekko.body).toBe(stored.get(endpoints['merchant-ekko']!.id))
    new Webhook(endpoints['merchant-ekko']!.secret).verify(ekko.body, ekko.headers as Record<string, string>)
    expect(ekko.headers.signature).toBe(createHmac('sha256', merchant.organisationId).update(ekko.body).digest('hex'))
    expect(JSON.parse(ekko.body)).toMatchObject({
      footprintId: quoteId,
      organisationId: merchant.organisationId,
      brandId: null,
      productId: null,
      customerId: 'consumer_123',
      eventType: 'IMPACT_PAYMENT',
      payment: { amount: 0.28, currencyCode: 'GBP', serviceFee: 0.04 },
      carbon: { unit: 'grams', quote: quoteGrams },
    })
    expect(Object.keys(JSON.parse(ekko.body))).toEqual([
      'footprintId',
      'organisationId',
      'brandId',
      'productId',
      'customerId',
      'eventType',
      'timestamp',
      'payment',
      'carbon',
    ])
  })

  it('writes no event for a replay, a refused allocation or another tree, and one allocation.reversed per reversal', async () => {
    const key = randomUUID()
    expect((await allocate(merchant.apiKey, key)).statusCode).toBe(201)
    const before = await eventCount()
    const replay = await allocate(merchant.apiKey, key)
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    // Refused writes: unknown quote, key reused with another request.
    expect((await allocate(merchant.apiKey, randomUUID(), merchant.organisationId, () => randomUUID())).statusCode).toBe(404)
    expect(
      (
        await client(t.app, merchant.apiKey).post(
          '/funds/allocations',
          { organisationId: merchant.organisationId, quoteId, credits: { amount: 0.27 } },
          { 'idempotency-key': key },
        )
      ).statusCode,
    ).toBe(422)
    expect(await eventCount()).toBe(before)

    const allocation = (await allocate()).json()
    const reversed = await client(t.app, merchant.apiKey).post(`/funds/allocations/${allocation.fundsAllocationId}/reverse`)
    expect(reversed.statusCode).toBe(201)
    expect((await client(t.app, merchant.apiKey).post(`/funds/allocations/${allocation.fundsAllocationId}/reverse`)).statusCode).toBe(409)
    expect(await eventCount()).toBe(before + 2)
    const { rows } = await sql<{
      id: string
      type: string
    }>`SELECT id, type FROM webhook_events ORDER BY created_at DESC, id DESC LIMIT 1`.execute(t.db)
    expect(rows[0]!.type).toBe('allocation.reversed')
    await t.app.webhooks.runOnce()
    await t.app.webhooks.runOnce()
    const got = receivedFor(rows[0]!.id)
    // platform (*), merchant-ekko (*), reversals-only: three endpoints; never the other tree's.
    expect(got).toHaveLength(3)
    const standard = got.find((r) => !r.headers.signature && r.body.includes('"type"'))!
    const payload = JSON.parse(standard.body)
    expect(payload).toMatchObject({
      type: 'allocation.reversed',
      data: { reversal: true, fundsAllocationId: allocation.fundsAllocationId, amounts: { total: -0.28 } },
    })
    expect(payload.data.reversalId).toBe(reversed.json().reversalId ?? payload.data.reversalId)
    const ekko = got.find((r) => r.headers.signature)!
    expect(JSON.parse(ekko.body)).toMatchObject({ eventType: 'IMPACT_PAYMENT_REVERSAL', payment: { amount: -0.28 } })
    expect(receiver.received.some((r) => r.body.includes(other.organisationId))).toBe(false)
  })

  it('writes no event row where no endpoint subscribes: the allocation is its own log', async () => {
    const quiet = await createOrg(t.db)
    const quote = (await client(t.app, quiet.apiKey).post('/quotes/carbon', floristQuote(quiet.organisationId))).json()
    const before = await eventCount()
    const res = await allocate(quiet.apiKey, randomUUID(), quiet.organisationId, () => quote.quoteId)
    expect(res.statusCode).toBe(201)
    expect((await client(t.app, quiet.apiKey).post(`/funds/allocations/${res.json().fundsAllocationId}/reverse`)).statusCode).toBe(201)
    expect(await eventCount()).toBe(before)
  })

  it("renders a body once: a retry sends the same bytes even after the record's organisation changed", async () => {
    const allocation = (await allocate()).json()
    const [event] = (
      await sql<{ id: string }>`SELECT id FROM webhook_events WHERE source_id = ${allocation.fundsAllocationId}`.execute(t.db)
    ).rows
    const toPlatform = () => receivedFor(event!.id).filter((r) => r.path.endsWith('/platform'))
    const deliverUntil = async (count: number) => {
      for (let i = 0; i < 5 && toPlatform().length < count; i++) await t.app.webhooks.runOnce()
    }
    await deliverUntil(1)
    const [first] = toPlatform()
    expect(first).toBeDefined()
    await sql`UPDATE organisations SET organisation_reference = 'renamed-after-the-event' WHERE id = ${merchant.organisationId}`.execute(
      t.db,
    )
    const { rows } = await sql<{ id: string }>`
      SELECT d.id FROM webhook_deliveries d WHERE d.event_id = ${event!.id} AND d.endpoint_id = ${endpoints.platform!.id}`.execute(t.db)
    const retried = await client(t.app, platform.apiKey).post(`/v3/webhook-endpoints/deliveries/${rows[0]!.id}/retry`)
    expect(retried.statusCode).toBe(202)
    await deliverUntil(2)
    const sent = toPlatform()
    expect(sent).toHaveLength(2)
    expect(sent[1]!.body).toBe(first!.body)
    expect(sent[1]!.body).not.toContain('renamed-after-the-event')

    // The endpoint switches to ekko's format: the next attempt is rendered (and stored) in that format.
    const patched = await client(t.app, platform.apiKey).patch(`/v3/webhook-endpoints/${endpoints.platform!.id}`, { format: 'ekko' })
    expect(patched.statusCode).toBe(200)
    try {
      expect((await client(t.app, platform.apiKey).post(`/v3/webhook-endpoints/deliveries/${rows[0]!.id}/retry`)).statusCode).toBe(202)
      await deliverUntil(3)
      const third = toPlatform()[2]!
      expect(JSON.parse(third.body)).toMatchObject({ footprintId: quoteId, eventType: 'IMPACT_PAYMENT' })
      expect(third.headers.signature).toBeDefined()
      const { rows: stored } = await sql<{ body: string; body_format: string }>`
        SELECT body, body_format FROM webhook_deliveries WHERE id = ${rows[0]!.id}`.execute(t.db)
      expect(stored[0]).toEqual({ body: third.body, body_format: 'ekko' })
    } finally {
      await client(t.app, platform.apiKey).patch(`/v3/webhook-endpoints/${endpoints.platform!.id}`, { format: 'standard' })
    }
  })
})
