// The delivery policy on an injected clock: the retry schedule (±20%), Retry-After, 410, 5 days of failures,
// manual retries, recovery and secret rotation. The worker is driven by hand (runOnce).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'
import { startReceiver, type Answer, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const ENV = {
  WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_WORKER: 'false',
  WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s',
}
const DAY = 86_400_000

let t: TestApp
let org: OrgFixture
let receiver: WebhookReceiver
/** Answers by path: each endpoint gets its own behaviour. */
const answers = new Map<string, (index: number) => Answer>()

beforeAll(async () => {
  t = await createTestApp(ENV)
  org = await createOrg(t.db)
  // One receiver, many endpoints: the last path segment picks the behaviour (index: that path's n-th request).
  receiver = await startReceiver((r) => {
    const name = r.path.split('/').pop() ?? ''
    const index = receiver.received.filter((x) => x.path === r.path).length - 1
    return answers.get(name)?.(index) ?? { status: 200 }
  })
})
afterAll(async () => {
  await receiver.close()
  await t.close()
})

async function endpointFor(name: string, answer: (index: number) => Answer): Promise<{ id: string; secret: string; url: string }> {
  answers.set(name, answer)
  const res = await client(t.app, org.apiKey).post('/v3/webhook-endpoints', {
    organisationId: org.organisationId,
    url: `${receiver.url}/${name}`,
  })
  expect(res.statusCode).toBe(201)
  return res.json()
}

const sendTest = async (endpointId: string): Promise<{ eventId: string; deliveryId: string }> => {
  const res = await client(t.app, org.apiKey).post(`/v3/webhook-endpoints/${endpointId}/test`)
  expect(res.statusCode).toBe(202)
  return res.json()
}

const delivery = async (id: string) =>
  (
    await sql<{ status: string; attempts: number; next_attempt_at: Date }>`
    SELECT status, attempts, next_attempt_at FROM webhook_deliveries WHERE id = ${id}`.execute(t.db)
  ).rows[0]!

const endpoint = async (id: string) => (await client(t.app, org.apiKey).get(`/v3/webhook-endpoints/${id}`)).json()

describe('webhook delivery policy', () => {
  it('retries on the schedule (each delay ±20%) and fails the delivery when it runs out; only a 2xx succeeds', async () => {
    const ep = await endpointFor('always-500', () => ({ status: 500 }))
    const { deliveryId } = await sendTest(ep.id)
    const delays: number[] = []
    for (let attempt = 1; attempt <= 4; attempt++) {
      await t.app.webhooks.runOnce()
      const d = await delivery(deliveryId)
      expect(d.attempts).toBe(attempt)
      if (attempt < 4) {
        expect(d.status).toBe('pending')
        const delay = d.next_attempt_at.getTime() - t.clock.now().getTime()
        delays.push(delay)
        // Not due yet just before its time.
        t.clock.advance(delay - 50)
        expect(await t.app.webhooks.runOnce()).toBe(0)
        t.clock.advance(50)
      } else {
        expect(d.status).toBe('failed')
      }
    }
    ;[1000, 2000, 4000].forEach((base, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(base * 0.8)
      expect(delays[i]).toBeLessThanOrEqual(base * 1.2)
    })
    const listed = (await client(t.app, org.apiKey).get(`/v3/webhook-endpoints/${ep.id}/deliveries?status=failed`)).json()
    expect(listed.data[0]).toMatchObject({ id: deliveryId, status: 'failed', attemptCount: 4, nextAttemptAt: null })
    expect(listed.data[0].attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 500, 500, 500])
  })

  it('honours Retry-After: the next attempt waits as long as the receiver asks (up to an hour), never less than the schedule', async () => {
    const ep = await endpointFor('retry-after', (i) =>
      i === 0 ? { status: 503, headers: { 'retry-after': '120' } } : { status: 429, headers: { 'retry-after': '86400' } },
    )
    const { deliveryId } = await sendTest(ep.id)
    await t.app.webhooks.runOnce()
    let d = await delivery(deliveryId)
    expect(d.next_attempt_at.getTime() - t.clock.now().getTime()).toBe(120_000)
    t.clock.advance(120_000)
    await t.app.webhooks.runOnce()
    d = await delivery(deliveryId)
    expect(d.next_attempt_at.getTime() - t.clock.now().getTime()).toBe(3_600_000)
  })

  it('a redirect is a failure and is not followed', async () => {
    const ep = await endpointFor('redirect', () => ({ status: 302, headers: { location: `${receiver.url}/redirect-target` } }))
    const { deliveryId } = await sendTest(ep.id)
    await t.app.webhooks.runOnce()
    expect((await delivery(deliveryId)).status).toBe('pending')
    expect(receiver.received.filter((r) => r.path.endsWith('/redirect-target'))).toHaveLength(0)
  })

  it('410 Gone disables the endpoint after one attempt and fails what it had pending', async () => {
    const ep = await endpointFor('gone', () => ({ status: 410 }))
    const first = await sendTest(ep.id)
    const second = await sendTest(ep.id)
    // Only the first is due: the second waits, pending, when the 410 arrives.
    await sql`UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at + interval '1 hour' WHERE id = ${second.deliveryId}`.execute(
      t.db,
    )
    await t.app.webhooks.runOnce()
    expect(await endpoint(ep.id)).toMatchObject({ status: 'disabled', disabledReason: 'the endpoint answered 410 Gone' })
    expect((await delivery(first.deliveryId)).status).toBe('failed')
    expect((await delivery(second.deliveryId)).status).toBe('failed')
    expect(receiver.received.filter((r) => r.path.endsWith('/gone'))).toHaveLength(1)
  })

  it('an endpoint that has only failed for 5 days is disabled; one success resets the streak', async () => {
    const app = await createTestApp({ ...ENV, WEBHOOK_RETRY_SCHEDULE: '1d,1d,1d,1d,1d,1d,1d,1d' })
    try {
      const owner = await createOrg(app.db)
      let healthy = false
      const local = await startReceiver(() => ({ status: healthy ? 200 : 500 }))
      const api = client(app.app, owner.apiKey)
      const ep = (await api.post('/v3/webhook-endpoints', { organisationId: owner.organisationId, url: local.url })).json()
      const attempt = async () => {
        await app.app.webhooks.runOnce()
        app.clock.advance(1.25 * DAY)
      }
      await api.post(`/v3/webhook-endpoints/${ep.id}/test`)
      await attempt()
      await attempt()
      const failingSince = (await api.get(`/v3/webhook-endpoints/${ep.id}`)).json().failingSince
      expect(failingSince).not.toBeNull()
      // A success (of another event) ends the streak.
      healthy = true
      await api.post(`/v3/webhook-endpoints/${ep.id}/test`)
      await app.app.webhooks.runOnce()
      expect((await api.get(`/v3/webhook-endpoints/${ep.id}`)).json().failingSince).toBeNull()
      healthy = false
      await api.post(`/v3/webhook-endpoints/${ep.id}/test`)
      for (let i = 0; i < 6 && (await api.get(`/v3/webhook-endpoints/${ep.id}`)).json().status === 'enabled'; i++) await attempt()
      const disabled = (await api.get(`/v3/webhook-endpoints/${ep.id}`)).json()
      expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'every delivery failed for 5 days' })
      const streak = new Date(app.clock.now().getTime() - 1.25 * DAY).getTime() - new Date(disabled.failingSince).getTime()
      expect(streak).toBeGreaterThanOrEqual(5 * DAY)
      expect(streak).toBeLessThan(6.25 * DAY)
      await local.close()
    } finally {
      await app.close()
    }
  })

  it('a manual retry makes one attempt now and is not rescheduled; recover restarts what failed since a time', async () => {
    let ok = false
    const ep = await endpointFor('manual', () => ({ status: ok ? 200 : 500 }))
    const { deliveryId } = await sendTest(ep.id)
    for (let i = 0; i < 4; i++) {
      await t.app.webhooks.runOnce()
      t.clock.advance(5000)
    }
    expect((await delivery(deliveryId)).status).toBe('failed')
    const retried = await client(t.app, org.apiKey).post(`/v3/webhook-endpoints/deliveries/${deliveryId}/retry`)
    expect(retried.statusCode).toBe(202)
    expect(retried.json()).toMatchObject({ status: 'pending', attemptCount: 4 })
    await t.app.webhooks.runOnce()
    expect(await delivery(deliveryId)).toMatchObject({ status: 'failed', attempts: 5 })

    ok = true
    const since = new Date(t.clock.now().getTime() - 3_600_000).toISOString()
    const recovered = await client(t.app, org.apiKey).post(`/v3/webhook-endpoints/${ep.id}/recover`, { since })
    expect(recovered.json()).toEqual({ recovered: 1 })
    await t.app.webhooks.runOnce()
    expect((await delivery(deliveryId)).status).toBe('succeeded')
  })

  it('rotation: both secrets sign during the grace period, only the new one after it', async () => {
    const ep = await endpointFor('rotation', () => ({ status: 200 }))
    const rotated = await client(t.app, org.apiKey).post(`/v3/webhook-endpoints/${ep.id}/rotate-secret`, { gracePeriodSeconds: 3600 })
    expect(rotated.statusCode).toBe(201)
    const { secret } = rotated.json()
    expect(secret).not.toBe(ep.secret)
    const during = await sendTest(ep.id)
    await t.app.webhooks.runOnce()
    const duringReq = receiver.received.find((r) => r.headers['webhook-id'] === during.eventId)!
    expect(String(duringReq.headers['webhook-signature']).split(' ')).toHaveLength(2)
    for (const s of [ep.secret, secret]) new Webhook(s).verify(duringReq.body, duringReq.headers as Record<string, string>)

    t.clock.advance(3_600_001)
    const after = await sendTest(ep.id)
    await t.app.webhooks.runOnce()
    const afterReq = receiver.received.find((r) => r.headers['webhook-id'] === after.eventId)!
    new Webhook(secret).verify(afterReq.body, afterReq.headers as Record<string, string>)
    expect(() => new Webhook(ep.secret).verify(afterReq.body, afterReq.headers as Record<string, string>)).toThrow()
  })
})

describe('webhook worker lifecycle', () => {
  it('runs with the app (a commit wakes it) and, on close, lets a delivery in flight finish and records it', async () => {
    const app = await createTestApp({ ...ENV, WEBHOOK_WORKER: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' })
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    // The receiver holds its answer until the test releases it: the request is in flight while the app closes.
    const server = createServer((req, res) => {
      req.resume()
      void held.then(() => res.writeHead(200).end())
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/held`
    let arrived = 0
    server.on('request', () => arrived++)
    const owner = await createOrg(app.db)
    const api = client(app.app, owner.apiKey)
    const ep = (await api.post('/v3/webhook-endpoints', { organisationId: owner.organisationId, url })).json()
    const { deliveryId } = (await api.post(`/v3/webhook-endpoints/${ep.id}/test`)).json()
    // Woken by the commit, not by the (one-minute) poll.
    for (let i = 0; i < 100 && arrived === 0; i++) await new Promise((r) => setTimeout(r, 20))
    expect(arrived).toBe(1)
    let closed = false
    const closing = app.app.close().then(() => (closed = true))
    await new Promise((r) => setTimeout(r, 300))
    expect(closed).toBe(false)
    release()
    await closing
    server.close()
    if (onPostgres()) {
      const handle = await app.database.open()
      try {
        const row = (await sql<{ status: string }>`SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}`.execute(handle.db))
          .rows[0]
        expect(row?.status).toBe('succeeded')
      } finally {
        await handle.close()
      }
    }
    await app.database.drop()
  })
})
