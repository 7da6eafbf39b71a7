// canopy.webhooks against deliveries the API really sent (its worker posting to a receiver on loopback): typed
// events, ekko's format, a secret rotation, and everything that must be refused.
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Canopy, CanopyWebhookVerificationError, type Allocation, type CreatedWebhookEndpoint } from '../src/index.js'
import { startReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.js'
import { floristQuote, startApi, type TestApi } from './helpers/api.js'

let api: TestApi
let canopy: Canopy
let receiver: WebhookReceiver
let standard: CreatedWebhookEndpoint
let ekko: CreatedWebhookEndpoint
let allocation: Allocation
/** Validators of the OpenAPI document's webhooks section, by name (allocation.created, IMPACT_PAYMENT…). */
const documented = new Map<string, (body: unknown) => boolean>()
const matchesDocument = (name: string, body: unknown) => documented.get(name)!(body)

const to = (path: string) => (r: ReceivedWebhook) => r.path === path
/** The delivery of event `type` to `path` about `allocationId` (waits for it). */
async function delivered(path: string, match: (body: Record<string, unknown>) => boolean): Promise<ReceivedWebhook> {
  for (let i = 0; i < 500; i++) {
    const found = receiver.received.filter(to(path)).find((r) => match(JSON.parse(r.body)))
    if (found) return found
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`nothing delivered to ${path}`)
}

const refusal = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(CanopyWebhookVerificationError)
    return (error as CanopyWebhookVerificationError).code
  }
  throw new Error('verified, but should have been refused')
}

beforeAll(async () => {
  api = await startApi({ WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_ALLOW_HTTP: 'true' })
  canopy = new Canopy({ apiKey: api.org.apiKey, baseUrl: api.baseUrl })
  receiver = await startReceiver(() => ({ status: 204 }))
  standard = await canopy.webhookEndpoints.create({ organisationId: api.org.organisationId, url: `${receiver.url}/standard` })
  ekko = await canopy.webhookEndpoints.create({ organisationId: api.org.organisationId, url: `${receiver.url}/ekko`, format: 'ekko' })
  // The bodies must be what the API's own OpenAPI document says each webhook carries.
  const document = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as {
    webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: object } } } } }>
  }
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  for (const [name, hook] of Object.entries(document.webhooks)) {
    const validate = ajv.compile(hook.post.requestBody.content['application/json'].schema)
    documented.set(name, (body) => {
      if (!validate(body)) throw new Error(`${name}: ${ajv.errorsText(validate.errors)}`)
      return true
    })
  }
  const quote = await canopy.quotes.createCarbon(floristQuote(api.org.organisationId))
  allocation = await canopy.allocations.create({
    organisationId: api.org.organisationId,
    quoteId: quote.quoteId,
    credits: { amount: '0.28' },
    contribution: { amount: '1.00' },
  })
})
afterAll(async () => {
  await receiver?.close()
  await api?.close()
})

const isAllocation = (type: string) => (body: Record<string, unknown>) =>
  (body.type === type || body.eventType === type) &&
  ((body.data as { fundsAllocationId?: string } | undefined)?.fundsAllocationId === allocation.fundsAllocationId ||
    body.footprintId === allocation.quoteId)

describe('canopy.webhooks.verify', () => {
  it('verifies a real allocation.created delivery and returns the typed event (as the OpenAPI document describes it)', async () => {
    const received = await delivered('/hooks/standard', isAllocation('allocation.created'))
    const event = canopy.webhooks.verify(received.body, received.headers, standard.secret)
    if (event.type !== 'allocation.created') throw new Error(`unexpected ${event.type}`)
    expect(event.id).toBe(received.headers['webhook-id'])
    expect(event.data).toMatchObject({ fundsAllocationId: allocation.fundsAllocationId, reversal: false, amounts: { total: 1.28 } })
    expect(event.organisationId).toBe(api.org.organisationId)
    expect(matchesDocument('allocation.created', event)).toBe(true)
    // Another Standard Webhooks implementation agrees; raw bytes and fetch Headers work as well.
    expect(new Webhook(standard.secret).verify(received.body, received.headers as Record<string, string>)).toEqual(event)
    const headers = new Headers(Object.entries(received.headers).map(([k, v]) => [k, String(v)]))
    expect(canopy.webhooks.verify(Buffer.from(received.body), headers, standard.secret)).toEqual(event)
  })

  it('refuses tampered bodies, wrong secrets, old or future timestamps, a signature moved to another event, missing headers', async () => {
    const received = await delivered('/hooks/standard', isAllocation('allocation.created'))
    const { body, headers } = received
    const timestamp = Number(headers['webhook-timestamp'])
    expect(refusal(() => canopy.webhooks.verify(body.replace('"total":1.28', '"total":12.8'), headers, standard.secret))).toBe(
      'WEBHOOK_SIGNATURE_INVALID',
    )
    expect(refusal(() => canopy.webhooks.verify(`${body} `, headers, standard.secret))).toBe('WEBHOOK_SIGNATURE_INVALID')
    expect(refusal(() => canopy.webhooks.verify(body, headers, ekko.secret))).toBe('WEBHOOK_SIGNATURE_INVALID')
    expect(refusal(() => canopy.webhooks.verify(body, headers, 'whsec_' + Buffer.alloc(32, 7).toString('base64')))).toBe(
      'WEBHOOK_SIGNATURE_INVALID',
    )
    expect(refusal(() => canopy.webhooks.verify(body, { ...headers, 'webhook-id': 'another-event' }, standard.secret))).toBe(
      'WEBHOOK_SIGNATURE_INVALID',
    )
    expect(refusal(() => canopy.webhooks.verify(body, { ...headers, 'webhook-signature': 'v1,' }, standard.secret))).toBe(
      'WEBHOOK_SIGNATURE_INVALID',
    )
    // The signature covers the timestamp, and a timestamp more than 5 minutes away is refused before that.
    expect(refusal(() => canopy.webhooks.verify(body, { ...headers, 'webhook-timestamp': String(timestamp + 1) }, standard.secret))).toBe(
      'WEBHOOK_SIGNATURE_INVALID',
    )
    expect(refusal(() => canopy.webhooks.verify(body, headers, standard.secret, { now: () => (timestamp + 301) * 1000 }))).toBe(
      'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
    )
    expect(refusal(() => canopy.webhooks.verify(body, headers, standard.secret, { now: () => (timestamp - 301) * 1000 }))).toBe(
      'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
    )
    expect(canopy.webhooks.verify(body, headers, standard.secret, { now: () => (timestamp + 299) * 1000 }).id).toBe(headers['webhook-id'])
    const { 'webhook-signature': _, ...unsigned } = headers
    expect(refusal(() => canopy.webhooks.verify(body, unsigned, standard.secret))).toBe('WEBHOOK_HEADERS_MISSING')
  })

  it("verifies ekko's format: the Standard Webhooks signature with the secret, and ekko's own signature header", async () => {
    const received = await delivered('/hooks/ekko', isAllocation('IMPACT_PAYMENT'))
    const event = canopy.webhooks.verifyEkko(received.body, received.headers, ekko.secret)
    expect(event).toMatchObject({
      eventType: 'IMPACT_PAYMENT',
      footprintId: allocation.quoteId,
      payment: { amount: 1.28, currencyCode: 'GBP' },
    })
    expect(matchesDocument('IMPACT_PAYMENT', event)).toBe(true)
    expect(canopy.webhooks.verifyEkkoSignature(received.body, received.headers, api.org.organisationId)).toEqual(event)
    expect(
      refusal(() => canopy.webhooks.verifyEkkoSignature(received.body.replace('1.28', '9.28'), received.headers, api.org.organisationId)),
    ).toBe('WEBHOOK_SIGNATURE_INVALID')
    expect(refusal(() => canopy.webhooks.verifyEkkoSignature(received.body, received.headers, standard.id))).toBe(
      'WEBHOOK_SIGNATURE_INVALID',
    )
    // An ekko body is not a Canopy event: verify() says so rather than returning the wrong type.
    expect(refusal(() => canopy.webhooks.verify(received.body, received.headers, ekko.secret))).toBe('WEBHOOK_BODY_INVALID')
  })

  it('verifies during a secret rotation with the old secret, the new one, or both; a secret whose grace was ended is refused', async () => {
    const rotated = await canopy.webhookEndpoints.rotateSecret(standard.id, { gracePeriodSeconds: 3600 })
    const reversal = await canopy.allocations.reverse(allocation.fundsAllocationId)
    const received = await delivered('/hooks/standard', isAllocation('allocation.reversed'))
    expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2)
    for (const secrets of [standard.secret, rotated.secret, [standard.secret, rotated.secret]]) {
      const event = canopy.webhooks.verify(received.body, received.headers, secrets)
      if (event.type !== 'allocation.reversed') throw new Error(`unexpected ${event.type}`)
      expect(event.data).toMatchObject({ reversal: true, reversalId: reversal.reversalId, amounts: { total: -1.28 } })
      expect(matchesDocument('allocation.reversed', event)).toBe(true)
    }

    // A second rotation with no grace: the secret it replaces stops signing at once (the first one still has its hour).
    const final = await canopy.webhookEndpoints.rotateSecret(standard.id, { gracePeriodSeconds: 0 })
    const { eventId } = await canopy.webhookEndpoints.test(standard.id)
    const test = await delivered('/hooks/standard', (body) => body.id === eventId)
    expect(String(test.headers['webhook-signature']).split(' ')).toHaveLength(2)
    const event = canopy.webhooks.verify(test.body, test.headers, final.secret)
    expect(event.type).toBe('webhook_endpoint.test')
    expect(matchesDocument('webhook_endpoint.test', event)).toBe(true)
    expect(canopy.webhooks.verify(test.body, test.headers, standard.secret)).toEqual(event)
    expect(refusal(() => canopy.webhooks.verify(test.body, test.headers, rotated.secret))).toBe('WEBHOOK_SIGNATURE_INVALID')
  })
})
