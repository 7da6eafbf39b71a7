import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const LOOPBACK_ENV = { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_WORKER: 'false' }

describe('webhook endpoints', () => {
  let t: TestApp
  let parent: OrgFixture
  let child: OrgFixture
  let stranger: OrgFixture
  let receiver: WebhookReceiver

  beforeAll(async () => {
    t = await createTestApp(LOOPBACK_ENV)
    parent = await createOrg(t.db)
    child = await createOrg(t.db, { parentId: parent.organisationId })
    stranger = await createOrg(t.db)
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await t.close()
  })

  const create = (body: Record<string, unknown>, key = parent.apiKey) => client(t.app, key).post('/v3/webhook-endpoints', body)

  it('creates an endpoint with its secret shown once, lists, reads, changes and deletes it (also without /v3)', async () => {
    const res = await create({ organisationId: child.organisationId, url: receiver.url, description: 'erp' })
    expect(res.statusCode).toBe(201)
    const created = res.json()
    expect(created).toMatchObject({
      organisationId: child.organisationId,
      url: receiver.url,
      enabledEvents: ['*'],
      format: 'standard',
      status: 'enabled',
    })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(res.headers['cache-control']).toBe('no-store')

    const read = await client(t.app, parent.apiKey).get(`/webhook-endpoints/${created.id}`)
    expect(read.statusCode).toBe(200)
    expect(read.json()).not.toHaveProperty('secret')
    const list = await client(t.app, parent.apiKey).get('/v3/webhook-endpoints')
    expect(list.json().data.map((e: { id: string }) => e.id)).toContain(created.id)
    const childList = await client(t.app, child.apiKey).get(`/v3/webhook-endpoints?organisationId=${child.organisationId}`)
    expect(childList.json().data).toHaveLength(1)

    const patched = await client(t.app, parent.apiKey).patch(`/v3/webhook-endpoints/${created.id}`, {
      enabledEvents: ['allocation.reversed'],
      status: 'disabled',
    })
    expect(patched.statusCode).toBe(200)
    expect(patched.json()).toMatchObject({
      enabledEvents: ['allocation.reversed'],
      status: 'disabled',
      disabledReason: 'disabled through the API',
    })
    const test = await client(t.app, parent.apiKey).post(`/v3/webhook-endpoints/${created.id}/test`)
    expect(test.statusCode).toBe(409)
    expect(test.json().code).toBe('WEBHOOK_ENDPOINT_DISABLED')

    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/v3/webhook-endpoints/${created.id}`,
      headers: { authorization: `Bearer ${parent.apiKey}` },
    })
    expect(deleted.statusCode).toBe(204)
    expect((await client(t.app, parent.apiKey).get(`/v3/webhook-endpoints/${created.id}`)).statusCode).toBe(404)
  })

  it('refuses bad input: unknown event type or format, non-http(s) URL (400), another tree (403 / 404)', async () => {
    const bad = [
      { organisationId: parent.organisationId, url: receiver.url, enabledEvents: ['allocation.exploded'] },
      { organisationId: parent.organisationId, url: receiver.url, format: 'xml' },
      { organisationId: parent.organisationId, url: 'ftp://example.com/hook' },
      { organisationId: parent.organisationId, url: 'not a url' },
    ]
    for (const body of bad) {
      const res = await create(body)
      expect(res.statusCode, JSON.stringify(body)).toBe(400)
    }
    expect((await create({ organisationId: stranger.organisationId, url: receiver.url })).statusCode).toBe(403)
    const theirs = (await create({ organisationId: stranger.organisationId, url: receiver.url }, stranger.apiKey)).json()
    for (const url of [`/v3/webhook-endpoints/${theirs.id}`, `/v3/webhook-endpoints/${theirs.id}/deliveries`]) {
      expect((await client(t.app, parent.apiKey).get(url)).statusCode).toBe(404)
    }
    expect((await client(t.app, parent.apiKey).post(`/v3/webhook-endpoints/${theirs.id}/test`)).statusCode).toBe(404)
    const delivery = (await client(t.app, stranger.apiKey).post(`/v3/webhook-endpoints/${theirs.id}/test`)).json()
    expect((await client(t.app, parent.apiKey).post(`/v3/webhook-endpoints/deliveries/${delivery.deliveryId}/retry`)).statusCode).toBe(404)
  })

  it('delivers a test event signed with the Standard Webhooks headers', async () => {
    const created = (await create({ organisationId: parent.organisationId, url: receiver.url })).json()
    const before = receiver.received.length
    const queued = await client(t.app, parent.apiKey).post(`/v3/webhook-endpoints/${created.id}/test`)
    expect(queued.statusCode).toBe(202)
    await t.app.webhooks.runOnce()
    const got = receiver.received.slice(before).filter((r) => r.headers['webhook-id'] === queued.json().eventId)
    expect(got).toHaveLength(1)
    const payload = new Webhook(created.secret).verify(got[0]!.body, got[0]!.headers as Record<string, string>) as Record<string, unknown>
    expect(payload).toMatchObject({ id: queued.json().eventId, type: 'webhook_endpoint.test', organisationId: parent.organisationId })
    expect(got[0]!.headers['webhook-id']).toBe(queued.json().eventId)
    const deliveries = (await client(t.app, parent.apiKey).get(`/v3/webhook-endpoints/${created.id}/deliveries`)).json()
    expect(deliveries.data[0]).toMatchObject({ status: 'succeeded', attemptCount: 1, eventType: 'webhook_endpoint.test' })
    expect(deliveries.data[0].attempts[0]).toMatchObject({ statusCode: 200, error: null })
    // ekko's header is not sent to a standard endpoint.
    expect(got[0]!.headers.signature).toBeUndefined()
  })

  it('pages deliveries with a limit given in the query string (digits, 1–100)', async () => {
    const endpoint = (await create({ organisationId: parent.organisationId, url: `${receiver.url}/paged` })).json()
    for (let i = 0; i < 3; i++) await client(t.app, parent.apiKey).post(`/v3/webhook-endpoints/${endpoint.id}/test`)
    const first = (await client(t.app, parent.apiKey).get(`/v3/webhook-endpoints/${endpoint.id}/deliveries?limit=2`)).json()
    expect(first.data).toHaveLength(2)
    expect(first.hasMore).toBe(true)
    const next = await client(t.app, parent.apiKey).get(
      `/v3/webhook-endpoints/${endpoint.id}/deliveries?limit=2&startingAfter=${first.data[1].id}`,
    )
    expect(next.json()).toMatchObject({ hasMore: false, data: [expect.any(Object)] })
    for (const limit of ['0', '101', '1.5', 'ten']) {
      const res = await client(t.app, parent.apiKey).get(`/v3/webhook-endpoints/${endpoint.id}/deliveries?limit=${limit}`)
      expect(res.statusCode, limit).toBe(400)
      expect(res.json()).toMatchObject({ code: 'BAD_REQUEST', details: [{ path: '/querystring/limit' }] })
    }
  })
})
