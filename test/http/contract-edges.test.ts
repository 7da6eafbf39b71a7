// The edges of the contract a hostile client or a careless one finds: partial reversals, framework-level and
// malformed requests, error sentences that state their rule, UUID case, empty partner lists, the Bearer scheme's
// case, duplicate JSON keys, and an OpenAPI document that validates.
import { randomUUID } from 'node:crypto'
import { connect } from 'node:net'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_PARTNER_IDS } from '../../src/domain/data/demo-catalogue.js'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let org: OrgFixture
let quoteId: string
let baseUrl: string

beforeAll(async () => {
  t = await createTestApp()
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db)
  quoteId = (await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))).json().quoteId
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(() => t.close())

const errorShape = { error: expect.any(String), code: expect.stringMatching(/^[A-Z_]+$/), requestId: expect.any(String) }

const allocate = (body: Record<string, unknown>, key = randomUUID()) =>
  client(t.app, org.apiKey).post('/funds/allocations', { organisationId: org.organisationId, quoteId, ...body }, { 'idempotency-key': key })

const reversalCount = async (allocationId: string) =>
  (await t.db.selectFrom('allocation_reversals').select('id').where('allocation_id', '=', allocationId).execute()).length

describe('reversal takes no body (issue: a partial refund silently became a full one)', () => {
  it.each([
    ['an amount', { amount: 0.5, reason: 'refund' }, 'PARTIAL_REVERSAL_NOT_SUPPORTED', '/amount'],
    ['an amount alone', { amount: 0.28 }, 'PARTIAL_REVERSAL_NOT_SUPPORTED', '/amount'],
    ['an unknown property', { reason: 'refund' }, 'BAD_REQUEST', '/reason'],
    ['an array', [], 'BAD_REQUEST', '/'],
  ])('refuses %s with 400 and reverses nothing', async (_label, body, code, path) => {
    const allocation = (await allocate({ credits: { amount: 0.28 } })).json()
    const res = await client(t.app, org.apiKey).post(`/funds/allocations/${allocation.fundsAllocationId}/reverse`, body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ ...errorShape, code, details: [expect.objectContaining({ path })] })
    expect(await reversalCount(allocation.fundsAllocationId)).toBe(0)
  })

  it.each([
    ['no body', undefined],
    ['an empty object', {}],
  ])('reverses the whole allocation with %s', async (_label, body) => {
    const allocation = (await allocate({ credits: { amount: 0.28 } })).json()
    const res = await client(t.app, org.apiKey).post(`/funds/allocations/${allocation.fundsAllocationId}/reverse`, body)
    expect(res.statusCode).toBe(201)
    expect(res.json().credits.map((e: { impactAmount: number }) => e.impactAmount)).toEqual(
      allocation.credits.map((e: { impactAmount: number }) => -e.impactAmount),
    )
    expect(await reversalCount(allocation.fundsAllocationId)).toBe(1)
  })
})

/** Sends raw bytes and returns the whole response (the server closes the connection). */
function raw(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes))
    let text = ''
    socket.on('data', (chunk) => (text += chunk.toString('latin1')))
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), headers: head, body })
    })
  })
}

describe('every error is in the one shape, framework-level included', () => {
  it('a malformed URL is a 400 with our code and a requestId', async () => {
    const res = await client(t.app, org.apiKey).get('/quotes/%ZZ', { 'x-request-id': 'req-bad-url' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ error: 'request url is invalid', code: 'BAD_REQUEST', requestId: 'req-bad-url' })
    expect(res.headers['x-request-id']).toBe('req-bad-url')
  })

  it.each([
    ['a garbage request line', 'HELLO THERE\r\n\r\n', 400, 'BAD_REQUEST'],
    ['a control byte in a header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n', 400, 'BAD_REQUEST'],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /quotes/carbon HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    [
      'headers that are too large',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'REQUEST_HEADER_FIELDS_TOO_LARGE',
    ],
  ])('%s is answered in the error shape and the connection closed', async (_label, bytes, status, code) => {
    const res = await raw(bytes)
    expect(res.status).toBe(status)
    expect(res.headers).toMatch(/content-type: application\/json/i)
    expect(res.headers).toMatch(/connection: close/i)
    expect(JSON.parse(res.body)).toEqual({ error: expect.any(String), code, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
  })
})

describe('error sentences state the rule they check', () => {
  const quote = (extra: Record<string, unknown>) =>
    client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId, extra))

  it('keeps the path as written and says what is expected in words', async () => {
    const res = await quote({ consumer: { reference: 'c', countryCode: 'gbr' } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      ...errorShape,
      error: 'consumer.countryCode must be an ISO 3166-1 alpha-3 country code in capitals, e.g. GBR',
      code: 'BAD_REQUEST',
      details: [{ path: '/consumer/countryCode', message: 'must be an ISO 3166-1 alpha-3 country code in capitals, e.g. GBR' }],
    })
  })

  it.each([
    ['a currency', { transaction: { amount: 10, currencyCode: 'gbp' } }, '/transaction/currencyCode', /ISO 4217/],
    ['an MCC', { merchant: { ...floristQuote('x').merchant, mcc: '59' } }, '/merchant/mcc', /4 digits/],
    ['a UUID', { organisationId: 'not-a-uuid' }, '/organisationId', /^must be a UUID$/],
  ])('%s', async (_label, extra, path, message) => {
    const res = await quote(extra)
    expect(res.json().details).toEqual([{ path, message: expect.stringMatching(message) }])
  })

  it('drops the noise a nullable object adds ("must be null", "must match a schema in anyOf")', async () => {
    const wrongType = await quote({ merchant: 5 })
    expect(wrongType.json().details).toEqual([{ path: '/merchant', message: 'must be object' }])
    const inner = await quote({ merchant: { ...floristQuote('x').merchant, name: '' } })
    expect(inner.json().details).toEqual([{ path: '/merchant/name', message: 'must NOT have fewer than 1 characters' }])
  })
})

describe('small contract edges', () => {
  it('takes UUIDs in either case and answers in lower case', async () => {
    const upper = org.organisationId.toUpperCase()
    const created = await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(upper))
    expect(created.statusCode).toBe(201)
    const id = created.json().quoteId
    expect((await client(t.app, org.apiKey).get(`/quotes/${id.toUpperCase()}`)).json().quoteId).toBe(id)
    const partner = DEMO_PARTNER_IDS.rewildTrust
    const allocation = await allocate({ organisationId: upper, contribution: { amount: 1, impactPartnerIds: [partner.toUpperCase()] } })
    expect(allocation.statusCode).toBe(201)
    expect(allocation.json().contributions.map((e: { impactPartnerId: string }) => e.impactPartnerId)).toEqual([partner])
  })

  it('replays an allocation whatever the case of its organisationId', async () => {
    const key = randomUUID()
    const first = await allocate({ organisationId: org.organisationId.toUpperCase(), credits: { amount: 0.28 } }, key)
    const again = await allocate({ organisationId: org.organisationId, credits: { amount: 0.28 } }, key)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.body).toBe(first.body)
  })

  it('refuses a UUID with a urn:uuid: prefix as 400, not 500', async () => {
    const res = await client(t.app, org.apiKey).get(`/quotes/urn:uuid:${quoteId}`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'BAD_REQUEST', details: [{ path: '/params/id', message: 'must be a UUID' }] })
  })

  it('refuses an explicit empty impactPartnerIds (omit the field for all partners)', async () => {
    const res = await allocate({ contribution: { amount: 1, impactPartnerIds: [] } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'BAD_REQUEST', details: [{ path: '/contribution/impactPartnerIds' }] })
    expect((await allocate({ contribution: { amount: 1 } })).statusCode).toBe(201)
  })

  it.each(['bearer', 'BEARER', 'Bearer'])('takes the %s scheme in any case', async (scheme) => {
    const res = await t.app.inject({
      url: `/v3/organisations/${org.organisationId}`,
      headers: { authorization: `${scheme} ${org.apiKey}` },
    })
    expect(res.statusCode).toBe(200)
  })

  it.each([
    ['no key', {}],
    ['a bad key', { authorization: 'Bearer ck_live_nope' }],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
  ])('answers 401 with WWW-Authenticate: Bearer for %s', async (_label, headers) => {
    const res = await t.app.inject({ url: `/v3/organisations/${org.organisationId}`, headers })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /)
  })

  it('answers 401 with WWW-Authenticate on session reads too', async () => {
    const res = await t.app.inject({ url: `/v3/post-purchase/sessions/${randomUUID()}` })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /)
  })

  it.each([
    ['at the top level', '{"organisationId":"ORG","quoteId":"Q","credits":{"amount":0.28},"credits":{"amount":100}}', '/credits'],
    ['in a nested object', '{"organisationId":"ORG","quoteId":"Q","credits":{"amount":0.28,"amount":100}}', '/credits/amount'],
  ])('refuses duplicate keys %s, naming the key', async (_label, text, path) => {
    const payload = text.replace('ORG', org.organisationId).replace('"Q"', `"${quoteId}"`)
    const res = await t.app.inject({
      method: 'POST',
      url: '/funds/allocations',
      payload,
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ ...errorShape, code: 'BAD_REQUEST', details: [{ path, message: 'appears more than once in its object' }] })
  })

  it('still takes the same key in different objects', async () => {
    const res = await allocate({ credits: { amount: 0.28 }, contribution: { amount: 0.28 } })
    expect(res.statusCode).toBe(201)
  })
})

describe('OpenAPI', () => {
  it('passes a standard OpenAPI validator', async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json()
    const validator = new Validator()
    const result = await validator.validate(document)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('documents, for every operation, the statuses it can answer', async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json()
    const missing: string[] = []
    for (const [path, item] of Object.entries<
      Record<string, { responses: Record<string, unknown>; security?: unknown[]; requestBody?: unknown }>
    >(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const statuses = Object.keys(operation.responses)
        const expected = ['500', '503']
        // The health checks are exempt from the rate limit; everything else can answer 429.
        if (!['/healthz', '/readyz'].includes(path)) expected.push('429')
        if (operation.security) expected.push('401')
        if (operation.requestBody) expected.push('400', '413', '415')
        for (const status of expected) if (!statuses.includes(status)) missing.push(`${method.toUpperCase()} ${path} ${status}`)
      }
    }
    expect(missing).toEqual([])
  })
})
