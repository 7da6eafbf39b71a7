// Whatever a client sends, the answer is a deliberate response: never a 5xx, always the error shape.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'

let t: TestApp
let org: OrgFixture
let quoteId: string

beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' })
  await importDemoCatalogue(t.db)
  org = await createOrg(t.db)
  quoteId = (await client(t.app, org.apiKey).post('/quotes/carbon', floristQuote(org.organisationId))).json().quoteId
})
afterAll(() => t.close())

/** Valid requests with some fields replaced by arbitrary JSON, plus wholly arbitrary JSON. */
const mutated = (valid: Record<string, unknown>) =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc
      .record({ key: fc.constantFrom(...Object.keys(valid), 'extra'), value: fc.jsonValue({ maxDepth: 2 }) })
      .map(({ key, value }) => ({ ...valid, [key]: value })),
    fc
      .record({
        path: fc.constantFrom('transaction', 'consumer', 'merchant', 'credits', 'contribution'),
        key: fc.string({ maxLength: 12 }),
        value: fc.jsonValue({ maxDepth: 1 }),
      })
      .map(({ path, key, value }) => ({ ...valid, [path]: { ...((valid[path] as object) ?? {}), [key]: value } })),
  )

const endpoints: [string, () => Record<string, unknown>][] = [
  ['/quotes/carbon', () => floristQuote(org.organisationId)],
  ['/quotes/nature', () => floristQuote(org.organisationId)],
  ['/v3/post-purchase/sessions', () => ({ ...floristQuote(org.organisationId), sdkVariant: 'embedded' })],
  ['/v3/checkout/sessions', () => floristQuote(org.organisationId)],
  ['/funds/allocations', () => ({ organisationId: org.organisationId, quoteId, credits: { amount: 0.28 }, contribution: { amount: 1 } })],
  [
    '/v3/organisations',
    () => ({
      parentOrganisationId: org.organisationId,
      tradingName: 'x',
      legalName: 'x',
      address: { line1: 'x', city: 'x', postalCode: 'x', countryCode: 'GBR' },
      currencyCode: 'GBP',
    }),
  ],
]

describe('arbitrary request bodies', () => {
  it.each(endpoints)('%s never answers 5xx (300 runs)', async (path, valid) => {
    await fc.assert(
      fc.asyncProperty(mutated(valid()), fc.string({ maxLength: 40 }), async (body, key) => {
        const res = await client(t.app, org.apiKey).post(path, body, { 'idempotency-key': key || 'k' })
        expect(res.statusCode).toBeLessThan(500)
        if (res.statusCode >= 400) expect(res.json()).toMatchObject({ error: expect.any(String), code: expect.stringMatching(/^[A-Z_]+$/) })
      }),
      { numRuns: 300 },
    )
  })
})
