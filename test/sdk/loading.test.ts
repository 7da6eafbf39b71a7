// @vitest-environment happy-dom
// The session request, its failures (loaderror codes) and destroy() in flight. fetch is a stub.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Canopy } from '../../sdk/src/canopy.js'
import { API, fixture, json, mountWidget, record, SECRET, SESSION_ID, settled, stubFetch } from './helpers.js'

afterEach(() => {
  document.body.replaceChildren()
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

const container = () => {
  const div = document.createElement('div')
  document.body.append(div)
  return div
}

describe('the request', () => {
  it('GETs the post-purchase session with the client secret in the Authorization header, no cookies', async () => {
    const w = await mountWidget({ canopy: { apiBase: `${API}/`, locale: 'en-GB' } })
    expect(w.fetch).toHaveBeenCalledTimes(1)
    const [url, init] = w.fetch.mock.calls[0] ?? []
    expect(url).toBe(`${API}/v3/post-purchase/sessions/${SESSION_ID}?locale=en-GB`)
    expect(init).toMatchObject({
      method: 'GET',
      credentials: 'omit',
      headers: { authorization: `Bearer ${SECRET}`, accept: 'application/json' },
      signal: expect.any(AbortSignal),
    })
    expect(url).not.toContain(SECRET)
  })

  it('sends no ?locale= without a locale option, and keeps a path prefix of apiBase', async () => {
    const w = await mountWidget({ type: 'checkout', canopy: { apiBase: 'https://shop.example/canopy' } })
    expect(w.fetch.mock.calls[0]?.[0]).toBe(`https://shop.example/canopy/v3/checkout/sessions/${SESSION_ID}`)
    expect(w.events.ready).toEqual([
      {
        elementType: 'checkout',
        sessionId: SESSION_ID,
        quoteId: '3c86ff2f-30ce-42ea-963f-8a8afb8490db',
        impactType: 'carbon',
        currencyCode: 'GBP',
        locale: 'en-GB',
        expiresAt: '2026-11-23T03:33:00.492Z',
      },
    ])
  })

  it('takes the client secret from a promise, resolved once for all the elements of a session', async () => {
    const fetch = stubFetch(() => json(fixture('carbon-en-GB')))
    const resolveSecret = vi.fn(async () => SECRET)
    const elements = new Canopy({ apiBase: API }).elements({ sessionId: SESSION_ID, clientSecret: resolveSecret() })
    const a = elements.create('embedded')
    const b = elements.create('checkout')
    const [ea, eb] = [record(a), record(b)]
    a.mount(container())
    b.mount(container())
    await settled(ea)
    await settled(eb)
    expect(ea.ready).toHaveLength(1)
    expect(eb.ready).toHaveLength(1)
    expect(resolveSecret).toHaveBeenCalledTimes(1)
    expect(fetch.mock.calls.map(([, init]) => (init?.headers as Record<string, string>).authorization)).toEqual([
      `Bearer ${SECRET}`,
      `Bearer ${SECRET}`,
    ])
  })
})

describe('loaderror', () => {
  const failWith = async (status: number, body: unknown) => {
    const w = await mountWidget({ body, status })
    expect(w.events.ready).toEqual([])
    expect(w.events.loaderror).toHaveLength(1)
    return w
  }

  it('410 → session_expired, and the element collapses (hidden, empty)', async () => {
    const w = await failWith(410, {
      error: 'session has expired; a new session must be created',
      code: 'SESSION_EXPIRED',
      requestId: 'req-1',
    })
    expect(w.events.loaderror[0]).toEqual({
      elementType: 'embedded',
      error: {
        type: 'api_error',
        code: 'session_expired',
        message: 'The session has expired: create a new one on your server. (HTTP 410)',
        status: 410,
        requestId: 'req-1',
      },
    })
    expect(w.host.hidden).toBe(true)
    expect(w.shadow.childNodes).toHaveLength(0)
  })

  it.each([
    [401, 'UNAUTHORIZED', 'unauthorized'],
    [404, 'NOT_FOUND', 'session_not_found'],
    [400, 'BAD_REQUEST', 'bad_request'],
    [429, 'RATE_LIMITED', 'rate_limited'],
    [500, 'INTERNAL', 'server_error'],
    [503, 'SERVICE_UNAVAILABLE', 'server_error'],
    [418, 'TEAPOT', 'api_error'],
  ])('%i → %s maps to %s', async (status, code, expected) => {
    const w = await failWith(status, { error: 'x', code, requestId: 'r' })
    expect(w.events.loaderror[0]?.error).toMatchObject({ type: 'api_error', code: expected, status, requestId: 'r' })
  })

  it('a fetch TypeError (CORS refusal or no network) → network_or_origin, naming the allowed origins', async () => {
    stubFetch(() => {
      throw new TypeError('Failed to fetch')
    })
    const element = new Canopy({ apiBase: API }).elements({ sessionId: SESSION_ID, clientSecret: SECRET }).create('embedded')
    const events = record(element)
    element.mount(container())
    await settled(events)
    const error = events.loaderror[0]?.error
    expect(error).toMatchObject({ type: 'network_error', code: 'network_or_origin', status: null })
    expect(error?.message).toContain(`Could not reach the Canopy API at ${API}`)
    expect(error?.message).toContain(`this page's origin (${location.origin})`)
    expect(error?.message).toContain('allowed origins')
  })

  it('a body that is not a session → invalid_response', async () => {
    const w = await failWith(200, { sessionId: SESSION_ID, hello: 'world' })
    expect(w.events.loaderror[0]?.error).toMatchObject({ code: 'invalid_response', status: 200 })
    const broken = fixture('carbon-en-GB')
    broken.credits.amounts.total = 0.283
    document.body.replaceChildren()
    const w2 = await failWith(200, broken)
    expect(w2.events.loaderror[0]?.error.code).toBe('invalid_response')
  })

  it('options that do not fit the session currency → invalid_options', async () => {
    const w = await mountWidget({ type: 'checkout', body: fixture('checkout-jpy'), options: { contributionAmounts: ['1.50'] } })
    expect(w.events.loaderror[0]?.error).toEqual({
      type: 'invalid_request_error',
      code: 'invalid_options',
      message: 'Canopy: contributionAmounts[0] ("1.50") has more decimal places than JPY allows (0)',
      status: null,
    })
  })

  it('a clientSecret promise that rejects, or resolves to an API key → loaderror, no request', async () => {
    const fetch = stubFetch(() => json(fixture('carbon-en-GB')))
    const rejected = new Canopy({ apiBase: API })
      .elements({ sessionId: SESSION_ID, clientSecret: Promise.reject(new Error('backend down')) })
      .create('embedded')
    const e1 = record(rejected)
    rejected.mount(container())
    await settled(e1)
    expect(e1.loaderror[0]?.error).toMatchObject({ code: 'client_secret_unavailable', message: expect.stringContaining('backend down') })
    const apiKey = new Canopy({ apiBase: API })
      .elements({ sessionId: SESSION_ID, clientSecret: Promise.resolve('ck_live_0000000000000000000000000000000000000000') })
      .create('embedded')
    const e2 = record(apiKey)
    apiKey.mount(container())
    await settled(e2)
    expect(e2.loaderror[0]?.error).toMatchObject({
      code: 'invalid_client_secret',
      message: expect.stringContaining('looks like an API key'),
    })
    expect(fetch).not.toHaveBeenCalled()
  })
})

describe('destroy()', () => {
  it('aborts the request in flight and emits nothing afterwards', async () => {
    let signal: AbortSignal | undefined
    stubFetch(
      (_url, init) =>
        new Promise<Response>((_resolve, reject) => {
          signal = init?.signal ?? undefined
          signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))
        }),
    )
    const element = new Canopy({ apiBase: API }).elements({ sessionId: SESSION_ID, clientSecret: SECRET }).create('embedded')
    const events = record(element)
    const box = container()
    element.mount(box)
    await vi.waitFor(() => expect(signal).toBeDefined())
    element.destroy()
    expect(signal?.aborted).toBe(true)
    expect(box.childNodes).toHaveLength(0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(Object.values(events).flat()).toEqual([])
    // A destroyed element refuses further use; destroying again is harmless.
    expect(() => element.mount(box)).toThrow('Canopy: mount() on an element that was destroyed')
    expect(() => element.on('change', () => undefined)).toThrow('destroyed')
    expect(() => element.destroy()).not.toThrow()
  })

  it('before the client secret resolves: no request is made at all', async () => {
    const fetch = stubFetch(() => json(fixture('carbon-en-GB')))
    let giveSecret: (secret: string) => void = () => undefined
    const element = new Canopy({ apiBase: API })
      .elements({ sessionId: SESSION_ID, clientSecret: new Promise<string>((resolve) => (giveSecret = resolve)) })
      .create('embedded')
    const events = record(element)
    element.mount(container())
    element.destroy()
    giveSecret(SECRET)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fetch).not.toHaveBeenCalled()
    expect(Object.values(events).flat()).toEqual([])
  })

  it('after load: removes the element and drops every handler (a later click emits nothing)', async () => {
    const w = await mountWidget({ options: { contributionAmounts: ['1.00'] } })
    const option = w.parts('option')[0]
    w.element.destroy()
    expect(w.container.querySelector('canopy-impact')).toBeNull()
    option?.click()
    expect(w.events.change).toEqual([])
  })
})

describe('unmount() and mount() again', () => {
  it('keeps the state and does not load twice', async () => {
    const w = await mountWidget({ options: { contributionAmounts: ['1.00'] } })
    w.part('switch')?.click()
    w.element.unmount()
    expect(w.container.querySelector('canopy-impact')).toBeNull()
    const other = container()
    w.element.mount(other)
    expect(w.fetch).toHaveBeenCalledTimes(1)
    const shadow = other.querySelector('canopy-impact')?.shadowRoot
    expect(shadow?.querySelector('[part="switch"]')?.getAttribute('aria-checked')).toBe('true')
    expect(() => w.element.mount(container())).toThrow('already mounted')
  })
})
