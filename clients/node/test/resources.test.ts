// Every resource of the client against the real API (in-process, on the test database), errors typed by code, and
// auto-pagination over 250 impact records and their webhook deliveries.
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Canopy,
  CanopyApiError,
  CanopyAuthenticationError,
  CanopyConflictError,
  CanopyInvalidRequestError,
  CanopyNotFoundError,
  CanopyPermissionError,
  CanopyUnprocessableError,
  toMinorUnits,
  type Allocation,
  type CarbonQuote,
  type ImpactRecord,
} from '../src/index.js'
import { startReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.js'
import { floristQuote, startApi, type TestApi } from './helpers/api.js'

let api: TestApi
let canopy: Canopy
let receiver: WebhookReceiver
const window = () => ({ dateTimeFrom: new Date(Date.now() - 3_600_000), dateTimeTo: new Date(Date.now() + 3_600_000) })

beforeAll(async () => {
  api = await startApi({ WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_WORKER: 'false' })
  canopy = new Canopy({ apiKey: api.org.apiKey, baseUrl: api.baseUrl })
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.close()
  await api?.close()
})

describe('organisations', () => {
  it('retrieves, creates a child and updates its allowed origins', async () => {
    const own = await canopy.organisations.retrieve(api.org.organisationId)
    expect(own.organisationId).toBe(api.org.organisationId)
    expect(own.lastResponse.status).toBe(200)
    expect(own.lastResponse.requestId).toEqual(expect.any(String))
    const child = await canopy.organisations.create({
      parentOrganisationId: api.org.organisationId,
      tradingName: 'Child shop',
      legalName: 'Child shop Ltd',
      address: { line1: '2 High Street', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
      currencyCode: 'GBP',
    })
    expect(child.parentOrganisationId).toBe(api.org.organisationId)
    const updated = await canopy.organisations.update(child.organisationId, { allowedOrigins: ['https://shop.example'] })
    expect(updated.allowedOrigins).toEqual(['https://shop.example'])
    expect(JSON.parse(JSON.stringify(updated))).not.toHaveProperty('lastResponse')
  })
})

describe('API keys', () => {
  it('creates, lists, rotates and revokes', async () => {
    const created = await canopy.apiKeys.create({ organisationId: api.org.organisationId, mode: 'test' })
    expect(created.apiKey).toMatch(/^ck_test_/)
    const listed = await canopy.apiKeys.list({ organisationId: api.org.organisationId })
    expect(listed.keys.map((k) => k.id)).toContain(created.id)
    const rotated = await canopy.apiKeys.rotate(created.id, { expireOldInSeconds: 60 })
    expect(rotated.previousKey.id).toBe(created.id)
    // The new key works through its own client.
    const other = new Canopy({ apiKey: rotated.apiKey, baseUrl: api.baseUrl })
    expect((await other.organisations.retrieve(api.org.organisationId)).organisationId).toBe(api.org.organisationId)
    const revoked = await canopy.apiKeys.revoke(rotated.id)
    expect(revoked.revokedAt).not.toBeNull()
  })
})

describe('quotes and sessions', () => {
  let quote: CarbonQuote

  it('creates a carbon quote from a string amount, retrieves it and its projects', async () => {
    const created = await canopy.quotes.createCarbon(floristQuote(api.org.organisationId))
    expect(created.lastResponse.status).toBe(201)
    quote = created
    expect(quote.credits.amounts.total).toBe(0.28)
    expect(toMinorUnits(quote.credits.amounts.total, quote.currencyCode)).toBe(28)
    expect(await canopy.quotes.retrieve(quote.quoteId)).toEqual(quote)
    const projects = await canopy.quotes.listProjects(quote.quoteId)
    expect(projects).toHaveLength(3)
    expect(projects.map((p) => p.type)).toEqual(['carbonCredits', 'carbonCredits', 'carbonCredits'])
  })

  it('creates a nature quote', async () => {
    const nature = await canopy.quotes.createNature({
      ...floristQuote(api.org.organisationId),
      transaction: { amount: 47.97, currencyCode: 'GBP' },
    })
    expect(nature.footprint.areaSquareMetres).toBeGreaterThan(0)
  })

  it('creates post-purchase and checkout sessions and reads them with the API key', async () => {
    const body = {
      organisationId: api.org.organisationId,
      consumer: { reference: 'c_1', countryCode: 'GBR' },
      transaction: { amount: '47.97', currencyCode: 'GBP' },
      orderItems: [{ itemReference: 'line_1', sku: 'POT', quantity: 3, unitPrice: { value: '15.99', currencyCode: 'GBP' } }],
    }
    const post = await canopy.sessions.createPostPurchase({ ...body, sdkVariant: 'embedded' })
    expect(post.clientSecret).toMatch(/^cs_live_/)
    const read = await canopy.sessions.retrievePostPurchase(post.sessionId, { locale: 'de-DE' })
    expect(read).toMatchObject({ sessionId: post.sessionId, kind: 'post-purchase', locale: 'de-DE', quoteId: post.quoteId })
    const checkout = await canopy.sessions.createCheckout(body)
    expect((await canopy.sessions.retrieveCheckout(checkout.sessionId)).kind).toBe('checkout')
    // The session's quote is an ordinary quote, locked at the exact amount sent as a string.
    expect((await canopy.quotes.retrieve(checkout.quoteId)).currencyCode).toBe('GBP')
  })

  it('allocates with an Idempotency-Key, replays it, reads and reverses the allocation, and reads its impact records', async () => {
    const params = {
      organisationId: api.org.organisationId,
      quoteId: quote.quoteId,
      credits: { amount: '0.28' },
      contribution: { amount: 1 },
    }
    const allocation = await canopy.allocations.create(params, { idempotencyKey: 'order-1001-impact' })
    expect(allocation.lastResponse).toMatchObject({ status: 201, idempotencyKey: 'order-1001-impact', replayed: false, attempts: 1 })
    const sum = (a: Allocation) =>
      [...a.credits, ...a.contributions].reduce(
        (total, e) =>
          total +
          toMinorUnits(e.impactAmount, 'GBP') +
          toMinorUnits(e.impactSalesTaxAmount, 'GBP') +
          toMinorUnits(e.serviceFeeAmount, 'GBP') +
          toMinorUnits(e.serviceFeeSalesTaxAmount, 'GBP'),
        0,
      )
    expect(sum(allocation)).toBe(128)
    const replay = await canopy.allocations.create(params, { idempotencyKey: 'order-1001-impact' })
    expect(replay.lastResponse.replayed).toBe(true)
    expect(replay).toEqual(allocation)
    expect(await canopy.allocations.retrieve(allocation.fundsAllocationId)).toEqual(allocation)

    const reversal = await canopy.allocations.reverse(allocation.fundsAllocationId)
    expect(reversal.reversalId).toEqual(expect.any(String))
    const record = await canopy.impactRecords.retrieve(allocation.fundsAllocationId)
    expect(record.amounts.total).toBe(1.28)
    expect((await canopy.impactRecords.retrieve(reversal.reversalId!)).amounts.total).toBe(-1.28)

    const csv = await canopy.impactRecords.exportCsv(window())
    const chunks: Buffer[] = []
    for await (const chunk of csv) chunks.push(chunk as Buffer)
    const lines = Buffer.concat(chunks).toString('utf8').trim().split(/\r?\n/)
    expect(lines[0]).toMatch(/^[a-zA-Z]/)
    expect(lines.filter((line) => line.includes(allocation.fundsAllocationId)).length).toBeGreaterThanOrEqual(2)
  })
})

describe('webhook endpoints', () => {
  it('creates, lists, reads, updates, rotates, tests, retries, recovers and deletes', async () => {
    const endpoint = await canopy.webhookEndpoints.create({ organisationId: api.org.organisationId, url: `${receiver.url}/crud` })
    expect(endpoint.secret).toMatch(/^whsec_/)
    expect((await canopy.webhookEndpoints.list({ organisationId: api.org.organisationId })).data.map((e) => e.id)).toContain(endpoint.id)
    expect((await canopy.webhookEndpoints.retrieve(endpoint.id)).url).toBe(`${receiver.url}/crud`)
    expect((await canopy.webhookEndpoints.update(endpoint.id, { description: 'ERP' })).description).toBe('ERP')
    const rotated = await canopy.webhookEndpoints.rotateSecret(endpoint.id, { gracePeriodSeconds: 60 })
    expect(rotated.secret).not.toBe(endpoint.secret)
    const { deliveryId, eventId } = await canopy.webhookEndpoints.test(endpoint.id)
    await api.app.webhooks.runOnce()
    const retried = await canopy.webhookEndpoints.retryDelivery(deliveryId)
    expect(retried).toMatchObject({ id: deliveryId, eventId, status: 'pending' })
    await api.app.webhooks.runOnce()
    const [delivery] = (await canopy.webhookEndpoints.listDeliveries(endpoint.id)).data
    expect(delivery).toMatchObject({ id: deliveryId, status: 'succeeded', attemptCount: 2 })
    // What the receiver got verifies with the new secret (the old one signs too, during the grace period).
    const received = receiver.received.find((r) => r.headers['webhook-id'] === eventId)!
    const event = canopy.webhooks.verify(received.body, received.headers, rotated.secret)
    expect(event.type).toBe('webhook_endpoint.test')
    expect(new Webhook(endpoint.secret).verify(received.body, received.headers as Record<string, string>)).toEqual(event)
    expect((await canopy.webhookEndpoints.recover(endpoint.id, { since: new Date(Date.now() - 60_000).toISOString() })).recovered).toBe(0)
    expect(await canopy.webhookEndpoints.delete(endpoint.id)).toBeUndefined()
    await expect(canopy.webhookEndpoints.retrieve(endpoint.id)).rejects.toBeInstanceOf(CanopyNotFoundError)
  })
})

describe('errors, typed by code', () => {
  it('401 UNAUTHORIZED for a wrong key', async () => {
    const wrong = new Canopy({ apiKey: 'ck_live_wrong', baseUrl: api.baseUrl })
    const error = await wrong.organisations.retrieve(api.org.organisationId).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CanopyAuthenticationError)
    expect(error).toMatchObject({ status: 401, code: 'UNAUTHORIZED', attempts: 1, requestId: expect.any(String) })
  })

  it('400 with every violation in details, and a business code of its own', async () => {
    const bad = await canopy.quotes
      .createCarbon({ ...floristQuote(api.org.organisationId), consumer: { reference: '', countryCode: 'gb' } })
      .catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(CanopyInvalidRequestError)
    expect(bad).toMatchObject({ code: 'BAD_REQUEST', status: 400 })
    expect((bad as CanopyInvalidRequestError).details.map((d) => d.path).sort()).toEqual(['/consumer/countryCode', '/consumer/reference'])
    const precision = await canopy.quotes
      .createCarbon({ ...floristQuote(api.org.organisationId), transaction: { amount: '47.975', currencyCode: 'GBP' } })
      .catch((e: unknown) => e)
    expect(CanopyApiError.is(precision, 'AMOUNT_PRECISION')).toBe(true)
  })

  it('403, 404, 409 and 422', async () => {
    const forbidden = await canopy.apiKeys.list({ organisationId: '00000000-0000-4000-8000-000000000000' }).catch((e: unknown) => e)
    expect(forbidden).toBeInstanceOf(CanopyPermissionError)
    expect(forbidden).toMatchObject({ code: 'FORBIDDEN' })
    const missing = await canopy.quotes.retrieve('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(CanopyNotFoundError)
    expect(missing).toMatchObject({ code: 'NOT_FOUND', status: 404 })

    const quote = await canopy.quotes.createCarbon(floristQuote(api.org.organisationId))
    const params = { organisationId: api.org.organisationId, quoteId: quote.quoteId, credits: { amount: 0.28 } }
    const allocation = await canopy.allocations.create(params, { idempotencyKey: 'order-422' })
    const reused = await canopy.allocations
      .create({ ...params, credits: { amount: 0.29 } }, { idempotencyKey: 'order-422' })
      .catch((e: unknown) => e)
    expect(reused).toBeInstanceOf(CanopyUnprocessableError)
    expect(reused).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', idempotencyKey: 'order-422', attempts: 1 })
    await canopy.allocations.reverse(allocation.fundsAllocationId)
    const again = await canopy.allocations.reverse(allocation.fundsAllocationId).catch((e: unknown) => e)
    expect(again).toBeInstanceOf(CanopyConflictError)
    if (!CanopyApiError.is(again, 'ALREADY_REVERSED')) throw new Error('expected ALREADY_REVERSED')
    expect(again.code).toBe('ALREADY_REVERSED')
  })

  it('refuses an amount that is not a decimal before sending anything', async () => {
    await expect(
      canopy.quotes.createCarbon({ ...floristQuote(api.org.organisationId), transaction: { amount: '47,97', currencyCode: 'GBP' } }),
    ).rejects.toThrow(/transaction\.amount must be a decimal number/)
  })
})

describe('auto-pagination', () => {
  const records: string[] = []

  beforeAll(async () => {
    // 250 allocations, 10 at a time, with an endpoint subscribed (a delivery each; the worker is off, so they wait).
    const endpoint = await canopy.webhookEndpoints.create({ organisationId: api.org.organisationId, url: `${receiver.url}/pages` })
    records.push(endpoint.id)
    const quote = await canopy.quotes.createCarbon(floristQuote(api.org.organisationId))
    for (let start = 0; start < 250; start += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          canopy.allocations.create(
            { organisationId: api.org.organisationId, quoteId: quote.quoteId, contribution: { amount: '1.00' } },
            { idempotencyKey: `page-${start + i}` },
          ),
        ),
      )
    }
  }, 120_000)

  it('walks 250 impact records page by page, each once and in order', async () => {
    const consumerReference = 'consumer_123'
    const first = await canopy.impactRecords.list({ ...window(), consumerReference, limit: 100 })
    expect(first.data).toHaveLength(100)
    expect(first.hasMore).toBe(true)
    const seen: ImpactRecord[] = []
    const pages: number[] = []
    const list = canopy.impactRecords.list({ ...window(), consumerReference, limit: 100 })
    for await (const page of list.pages()) pages.push(page.data.length)
    for await (const record of list) seen.push(record)
    // The records of the other tests in this file come too: every allocation and reversal of the window.
    expect(seen.length).toBeGreaterThanOrEqual(250)
    expect(pages.reduce((a, b) => a + b)).toBe(seen.length)
    expect(pages.slice(0, 2)).toEqual([100, 100])
    const ids = seen.map((r) => r.reversalId ?? r.fundsAllocationId)
    expect(new Set(ids).size).toBe(ids.length)
    const times = seen.map((r) => r.fundsDateTime)
    expect([...times].sort()).toEqual(times)

    // Backwards from the last record: the same records, newest first.
    const last = ids[ids.length - 1]!
    const back = await canopy.impactRecords
      .list({ ...window(), consumerReference, limit: 100, endingBefore: last })
      .toArray({ limit: 1000 })
    expect(back.map((r) => r.reversalId ?? r.fundsAllocationId)).toEqual(ids.slice(0, -1).reverse())
    await expect(canopy.impactRecords.list({ ...window(), limit: 100 }).toArray({ limit: 10 })).rejects.toThrow(RangeError)
  })

  it('walks the webhook deliveries of an endpoint across pages', async () => {
    const endpointId = records[0]!
    const deliveries = await canopy.webhookEndpoints.listDeliveries(endpointId, { limit: 100 }).toArray({ limit: 1000 })
    expect(deliveries).toHaveLength(250)
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(250)
    expect(deliveries.every((d) => d.endpointId === endpointId && d.eventType === 'allocation.created')).toBe(true)
  })
})
