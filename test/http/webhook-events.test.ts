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
  quoteId = (await client(t.app, merchant.apiKey).post('/quotes/carbon', floristQuote(merchant.organisationId))).json().quoteId
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
    const [event] = (
      await sql<{ id: string; body: string }>`SELECT id, body FROM webhook_events ORDER BY created_at DESC LIMIT 1`.execute(t.db)
    ).rows
    await t.app.webhooks.runOnce()
    const got = receivedFor(event!.id)
    expect(got).toHaveLength(2)

    const standard = got.find((r) => !r.headers.signature)!
    expect(standard.body).toBe(event!.body)
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
      carbon: { unit: 'grams' },
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
})
