// Safe retries against the real API: a dropped connection, a real 503 (the database unreachable), a real 429 (the
// rate limit), timeouts and cancellation. The Idempotency-Key of an allocation is the same on every attempt, so a
// retry never allocates twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Canopy,
  CanopyConnectionError,
  CanopyRateLimitError,
  CanopyServerError,
  CanopyTimeoutError,
  type CanopyOptions,
  type FetchLike,
  type ResponseEvent,
} from '../src/index.js'
import { startTcpProxy, type TcpProxy } from '../../../test/helpers/tcp-proxy.js'
import { startDroppingProxy, type DroppingProxy } from './helpers/dropping-proxy.js'
import { floristQuote, startApi, type TestApi } from './helpers/api.js'

const RATE_LIMIT = 40
let api: TestApi
let proxy: TcpProxy
let dropping: DroppingProxy
let quoteId: string

/** A client, the events of its attempts, and the waits it asked for (the injected clock resolves them at once). */
function clientWith(options: Partial<CanopyOptions> = {}, via: 'proxy' | 'dropping' | 'direct' = 'direct') {
  const events: ResponseEvent[] = []
  const sleeps: number[] = []
  const canopy = new Canopy({
    apiKey: api.org.apiKey,
    baseUrl: via === 'direct' ? api.baseUrl : `http://127.0.0.1:${via === 'proxy' ? proxy.port : dropping.port}`,
    sleep: async (ms) => {
      sleeps.push(ms)
    },
    random: () => 0.5,
    ...options,
  })
  canopy.on('response', (event) => events.push(event))
  return { canopy, events, sleeps }
}

const allocationsWithKey = async (key: string) =>
  (await api.db.selectFrom('allocations').select('id').where('idempotency_key', '=', key).execute()).length
const quoteCount = async () =>
  Number(
    (
      await api.db
        .selectFrom('quotes')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

beforeAll(async () => {
  api = await startApi({ WEBHOOK_WORKER: 'false', RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) })
  const port = Number(new URL(api.baseUrl).port)
  proxy = await startTcpProxy({ host: '127.0.0.1', port })
  dropping = await startDroppingProxy({ host: '127.0.0.1', port })
  const canopy = new Canopy({ apiKey: api.org.apiKey, baseUrl: api.baseUrl })
  quoteId = (await canopy.quotes.createCarbon(floristQuote(api.org.organisationId))).quoteId
})
afterAll(async () => {
  await dropping?.close()
  proxy?.resume({ deliverOrphans: false })
  await proxy?.close()
  await api?.close()
})

describe('a dropped connection', () => {
  it('retries an allocation with the same Idempotency-Key: exactly one allocation, the replay returned', async () => {
    const { canopy, events, sleeps } = clientWith({}, 'dropping')
    const keys: (string | undefined)[] = []
    canopy.on('request', (event) => keys.push(event.idempotencyKey))
    const dropped = dropping.dropNextAnswer(/^POST \/funds\/allocations /)
    const allocation = await canopy.allocations.create({ organisationId: api.org.organisationId, quoteId, credits: { amount: '0.28' } })
    await dropped
    expect(events.map((e) => [e.status, e.error?.code])).toEqual([
      [undefined, 'CONNECTION_ERROR'],
      [201, undefined],
    ])
    expect(sleeps).toEqual([500])
    // One key, generated for the call (a UUID), on both attempts; the second answer is the API's replay.
    expect(keys).toHaveLength(2)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    expect(allocation.lastResponse).toMatchObject({ replayed: true, attempts: 2, idempotencyKey: keys[0] })
    expect(await allocationsWithKey(keys[0]!)).toBe(1)
  })

  it('does not retry a call the API does not make safe (a quote): the error says so, and the quote may exist', async () => {
    const { canopy, events } = clientWith({}, 'dropping')
    const before = await quoteCount()
    const dropped = dropping.dropNextAnswer(/^POST \/quotes\/carbon /)
    const error = await canopy.quotes.createCarbon(floristQuote(api.org.organisationId)).catch((e: unknown) => e)
    await dropped
    expect(error).toBeInstanceOf(CanopyConnectionError)
    expect(error).toMatchObject({ code: 'CONNECTION_ERROR', attempts: 1 })
    expect(events).toHaveLength(1)
    // The API created it: that is why the client must not send it again.
    expect(await quoteCount()).toBe(before + 1)
  })

  it('retries any call whose connection never opened (nothing was sent)', async () => {
    const closed = await startTcpProxy({ host: '127.0.0.1', port: 9 }, { accepting: false })
    const { canopy, sleeps } = clientWith({ baseUrl: `http://127.0.0.1:${closed.port}` })
    const error = await canopy.quotes.createCarbon(floristQuote(api.org.organisationId)).catch((e: unknown) => e)
    await closed.close()
    expect(error).toBeInstanceOf(CanopyConnectionError)
    expect(error).toMatchObject({ attempts: 3 })
    expect(sleeps).toHaveLength(2)
  })
})

describe('503 SERVICE_UNAVAILABLE (the database unreachable)', () => {
  it('retries with exponential backoff, jitter and Retry-After, with the same key, and allocates once', async () => {
    const { canopy, events, sleeps } = clientWith({ backoff: { initialDelayMs: 800, maxDelayMs: 8000 } })
    api.outage.failNext(2)
    const allocation = await canopy.allocations.create(
      { organisationId: api.org.organisationId, quoteId, contribution: { amount: 1 } },
      { idempotencyKey: 'order-503' },
    )
    expect(events.map((e) => e.status)).toEqual([503, 503, 201])
    expect(events.map((e) => e.error?.code)).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', undefined])
    // 800 ms then 1600 ms, each × 0.75 (the jitter at random 0.5), never under 800 ms nor under Retry-After: 1 (1000 ms).
    expect(sleeps).toEqual([1000, 1200])
    expect(events.map((e) => e.retryInMs)).toEqual([1000, 1200, undefined])
    expect(allocation.lastResponse).toMatchObject({ attempts: 3, replayed: false, idempotencyKey: 'order-503' })
    expect(await allocationsWithKey('order-503')).toBe(1)
  })

  it('gives up after maxRetries with a typed error carrying Retry-After', async () => {
    const { canopy, events } = clientWith()
    api.outage.failNext(3)
    const error = await canopy.organisations.retrieve(api.org.organisationId, { maxRetries: 2 }).catch((e: unknown) => e)
    api.outage.failNext(0)
    expect(events.map((e) => e.status)).toEqual([503, 503, 503])
    expect(error).toBeInstanceOf(CanopyServerError)
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', attempts: 3, retryAfterMs: 1000 })
  })

  it('never retries a 503 of a call the API does not make safe', async () => {
    const { canopy, events } = clientWith()
    api.outage.failNext(1)
    const error = await canopy.sessions
      .createCheckout({
        organisationId: api.org.organisationId,
        consumer: { reference: 'c', countryCode: 'GBR' },
        transaction: { amount: 10, currencyCode: 'GBP' },
      })
      .catch((e: unknown) => e)
    api.outage.failNext(0)
    expect(error).toMatchObject({ status: 503, attempts: 1 })
    expect(events).toHaveLength(1)
  })
})

describe('429 TOO_MANY_REQUESTS (the rate limit)', () => {
  it('honours Retry-After on every retry, then throws a typed error; a too-long Retry-After is not waited for', async () => {
    const direct = new Canopy({ apiKey: api.org.apiKey, baseUrl: api.baseUrl })
    const { apiKey } = await direct.apiKeys.create({ organisationId: api.org.organisationId })
    const { canopy, events, sleeps } = clientWith({ apiKey })
    for (let i = 0; i < RATE_LIMIT; i++) await canopy.organisations.retrieve(api.org.organisationId)
    events.length = 0
    // Creating a quote is retried on 429 too: the rate limit answers before any route runs, so nothing was done.
    const before = await quoteCount()
    const error = await canopy.quotes.createCarbon(floristQuote(api.org.organisationId)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CanopyRateLimitError)
    const limited = error as CanopyRateLimitError
    expect(limited).toMatchObject({ status: 429, code: 'TOO_MANY_REQUESTS', attempts: 3 })
    expect(limited.retryAfterMs).toBeGreaterThan(0)
    expect(events.map((e) => e.status)).toEqual([429, 429, 429])
    expect(sleeps).toHaveLength(2)
    for (const ms of sleeps) expect(ms).toBeGreaterThanOrEqual(limited.retryAfterMs!)
    expect(await quoteCount()).toBe(before)

    const { canopy: impatient, events: once } = clientWith({ apiKey, maxRetryAfterMs: 500 })
    await expect(impatient.organisations.retrieve(api.org.organisationId)).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS', attempts: 1 })
    expect(once).toHaveLength(1)
  })
})

describe('timeouts, cancellation and an injected fetch', () => {
  it('times each attempt out, retries a read, and throws CanopyTimeoutError', async () => {
    const { canopy, events } = clientWith({ timeout: 150 }, 'proxy')
    proxy.freeze()
    try {
      const error = await canopy.quotes.retrieve(quoteId, { maxRetries: 1 }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(CanopyTimeoutError)
      expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 2 })
      expect(events.map((e) => e.error?.code)).toEqual(['TIMEOUT', 'TIMEOUT'])
    } finally {
      proxy.resume({ deliverOrphans: false })
    }
  })

  it("rejects with the caller's abort reason, also while waiting to retry", async () => {
    const { canopy } = clientWith({ sleep: undefined, backoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 } }, 'proxy')
    proxy.freeze()
    const controller = new AbortController()
    const pending = canopy.quotes.retrieve(quoteId, { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('the shopper left')), 50)
    await expect(pending).rejects.toThrow('the shopper left')
    proxy.resume({ deliverOrphans: false })

    // During the backoff wait: a connection refused is retried after 60 s, unless aborted first.
    const closed = await startTcpProxy({ host: '127.0.0.1', port: 9 }, { accepting: false })
    const waiting = new Canopy({ apiKey: api.org.apiKey, baseUrl: `http://127.0.0.1:${closed.port}`, backoff: { initialDelayMs: 60_000 } })
    const started = Date.now()
    const aborted = waiting.quotes.retrieve(quoteId, { signal: AbortSignal.timeout(100) }).catch((e: unknown) => e)
    expect(await aborted).toMatchObject({ name: 'TimeoutError' })
    expect(Date.now() - started).toBeLessThan(5_000)
    await closed.close()
  })

  it('sends every request through an injected fetch', async () => {
    const seen: string[] = []
    const counting: FetchLike = (url, init) => {
      seen.push(`${init.method} ${new URL(url).pathname} ${new Headers(init.headers).get('user-agent')}`)
      return fetch(url, init)
    }
    const { canopy } = clientWith({ fetch: counting })
    await canopy.quotes.listProjects(quoteId)
    expect(seen).toEqual([`GET /quotes/${quoteId}/projects canopy-node/0.1.0 node/${process.version}`])
  })
})
