// The Hub's own reads behind its dashboard and allocations browser (src/routes/hub/insights.ts): the equivalents of a
// number of tonnes, an allocation's records (its own and its reversal's) and the webhook deliveries of its events —
// each for a signed-in role that may read them, refused for one that may not, scoped to the user's tree, and every bad
// input a 4xx in the error shape.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { createHubUser, signedIn, type HubClient } from '../helpers/hub.js'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

let t: TestApp
let platform: OrgFixture
let merchant: OrgFixture
let stranger: OrgFixture
let receiver: WebhookReceiver
let admin: HubClient
let analyst: HubClient
let developer: HubClient
/** A developer of the merchant (a child): it may not see the platform's endpoint. */
let merchantDeveloper: HubClient
let strangerAdmin: HubClient

async function allocate(org: OrgFixture): Promise<string> {
  const quote = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))
  expect(quote.statusCode).toBe(201)
  const res = await client(t.app, org.apiKey).post(
    '/funds/allocations',
    { organisationId: org.organisationId, quoteId: quote.json().quoteId, credits: { amount: 0.28 }, contribution: { amount: 1 } },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode).toBe(201)
  return res.json().fundsAllocationId
}

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_WORKER: 'false' })
  await importDemoCatalogue(t.db)
  platform = await createOrg(t.db, { tradingName: 'Platform' })
  merchant = await createOrg(t.db, { parentId: platform.organisationId, tradingName: 'Merchant' })
  stranger = await createOrg(t.db, { tradingName: 'Stranger' })
  receiver = await startReceiver()
  for (const [org, name] of [
    [platform, 'platform'],
    [merchant, 'merchant'],
  ] as const) {
    const res = await client(t.app, org.apiKey).post('/v3/webhook-endpoints', {
      url: `${receiver.url}/${name}`,
      organisationId: org.organisationId,
    })
    expect(res.statusCode).toBe(201)
  }
  const user = async (org: OrgFixture, role: 'admin' | 'developer' | 'analyst') =>
    signedIn(t.app, await createHubUser(t.db, org.organisationId, role))
  ;[admin, analyst, developer, merchantDeveloper, strangerAdmin] = await Promise.all([
    user(platform, 'admin'),
    user(platform, 'analyst'),
    user(platform, 'developer'),
    user(merchant, 'developer'),
    user(stranger, 'admin'),
  ])
})

afterAll(async () => {
  await receiver?.close()
  await t?.close()
})

describe('GET /hub/api/equivalents', () => {
  it('describes tonnes as a quote describes its footprint, in the resolved locale', async () => {
    const gb = await analyst.get('/hub/api/equivalents?tonnes=1.5&locale=en-GB')
    expect(gb.statusCode).toBe(200)
    // 1,500,000 g: 3,817 miles at 393 g/mile, 120,968 charges at 12.4 g, 91,313 tree-days (60 kg per 3,652.5 days).
    expect(gb.json()).toEqual({
      locale: 'en-GB',
      equivalents: [
        { key: 'car', value: 3817, description: expect.stringContaining('3,817 mi') },
        { key: 'phone', value: 120968, description: expect.stringContaining('120,968') },
        { key: 'tree', value: 91313, description: expect.stringContaining('91,313') },
      ],
    })
    const de = await analyst.get('/hub/api/equivalents?tonnes=1.5&locale=de-AT')
    expect(de.json().locale).toBe('de-DE')
    // Kilometres at 244.2 g/km: 6,142.5… → 6,143, written the German way.
    expect(de.json().equivalents[0]).toEqual({ key: 'car', value: 6143, description: expect.stringContaining('6.143 km') })
    expect((await analyst.get('/hub/api/equivalents?tonnes=0')).json().equivalents.map((e: { value: number }) => e.value)).toEqual([
      0, 0, 0,
    ])
  })

  it.each([
    ['a negative number', 'tonnes=-1', '/querystring/tonnes'],
    ['not a number', 'tonnes=lots', '/querystring/tonnes'],
    ['seven decimals', 'tonnes=0.0000001', '/querystring/tonnes'],
    ['no tonnes', 'locale=en-GB', '/querystring/tonnes'],
    ['an unknown parameter', 'tonnes=1&currency=GBP', '/querystring'],
  ])('refuses %s with 400 BAD_REQUEST naming the parameter', async (_, query, path) => {
    const res = await analyst.get(`/hub/api/equivalents?${query}`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'BAD_REQUEST', details: [expect.objectContaining({ path: expect.stringContaining(path) })] })
  })

  it('is the Hub’s alone: an API key is refused, and so is a request without a session', async () => {
    expect((await client(t.app, platform.apiKey).get('/hub/api/equivalents?tonnes=1')).statusCode).toBe(401)
    expect((await t.app.inject({ url: '/hub/api/equivalents?tonnes=1', headers: { origin: 'http://127.0.0.1:3000' } })).statusCode).toBe(
      401,
    )
  })
})

describe("an allocation's records and webhook deliveries", () => {
  let kept: string
  let reversed: string
  let reversalId: string

  beforeAll(async () => {
    kept = await allocate(merchant)
    reversed = await allocate(merchant)
    const res = await client(t.app, merchant.apiKey).post(`/funds/allocations/${reversed}/reverse`)
    expect(res.statusCode).toBe(201)
    reversalId = res.json().reversalId
  })

  it('gives the allocation’s record, and its reversal’s when it was reversed, by either id; the same records as the list', async () => {
    const one = await analyst.get(`/hub/api/funds/allocations/${kept}/records`)
    expect(one.statusCode).toBe(200)
    expect(one.json().data).toHaveLength(1)
    expect(one.json().data[0]).toEqual((await analyst.get(`/hub/api/funds/allocations/${kept}/impact`)).json())

    const both = await analyst.get(`/hub/api/funds/allocations/${reversed}/records`)
    expect(both.json().data.map((r: { reversal: boolean }) => r.reversal)).toEqual([false, true])
    const [record, reversal] = both.json().data
    expect(reversal.fundsAllocationId).toBe(record.fundsAllocationId)
    expect(reversal.amounts.total).toBe(-record.amounts.total)
    const byReversal = await analyst.get(`/hub/api/funds/allocations/${reversal.reversalId}/records`)
    expect(byReversal.json()).toEqual(both.json())
    expect(reversal.reversalId).toBe(reversalId)
  })

  it('answers 404 for an allocation outside the user’s tree or unknown, and 400 for a malformed id', async () => {
    for (const path of ['records', 'webhook-deliveries']) {
      expect((await strangerAdmin.get(`/hub/api/funds/allocations/${kept}/${path}`)).json().code).toBe('NOT_FOUND')
      expect((await admin.get(`/hub/api/funds/allocations/${randomUUID()}/${path}`)).statusCode).toBe(404)
      const bad = await admin.get(`/hub/api/funds/allocations/not-an-id/${path}`)
      expect(bad.statusCode).toBe(400)
      expect(bad.json().code).toBe('BAD_REQUEST')
    }
  })

  it('lists the deliveries of the allocation’s events, created and reversed, to the endpoints the user may see', async () => {
    const created = await developer.get(`/hub/api/funds/allocations/${kept}/webhook-deliveries`)
    expect(created.statusCode).toBe(200)
    // The merchant's event goes to its own endpoint and to its parent's.
    expect(
      created
        .json()
        .data.map((d: { eventType: string; endpointUrl: string }) => `${d.eventType} ${d.endpointUrl.split('/').pop()}`)
        .sort(),
    ).toEqual(['allocation.created merchant', 'allocation.created platform'])
    expect(created.json().data[0]).toMatchObject({ status: 'pending', attempts: 0, lastStatusCode: null, lastAttemptAt: null })

    const both = await admin.get(`/hub/api/funds/allocations/${reversed}/webhook-deliveries`)
    expect(
      both
        .json()
        .data.map((d: { eventType: string }) => d.eventType)
        .sort(),
    ).toEqual(['allocation.created', 'allocation.created', 'allocation.reversed', 'allocation.reversed'])
    // Nothing of the other allocation.
    const eventIds = new Set(both.json().data.map((d: { eventId: string }) => d.eventId))
    for (const d of created.json().data) expect(eventIds.has(d.eventId)).toBe(false)

    // The merchant's developer sees its own endpoint only: the platform's is its parent's.
    const own = await merchantDeveloper.get(`/hub/api/funds/allocations/${kept}/webhook-deliveries`)
    expect(own.json().data.map((d: { endpointUrl: string }) => d.endpointUrl.split('/').pop())).toEqual(['merchant'])
  })

  it('refuses the deliveries to a role without webhooks:read, and lets it read the records', async () => {
    const res = await analyst.get(`/hub/api/funds/allocations/${kept}/webhook-deliveries`)
    expect(res.statusCode).toBe(403)
    expect(res.json().code).toBe('PERMISSION_DENIED')
    expect((await analyst.get(`/hub/api/funds/allocations/${kept}/records`)).statusCode).toBe(200)
  })
})
