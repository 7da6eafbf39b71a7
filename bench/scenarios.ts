// Benchmark scenarios. Each issue adds its endpoints here; every figure is reported against the baseline.
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../src/db/database.js'
import { FLORIST_EXAMPLE } from '../src/http/schemas/quotes.js'
import { demoCatalogue, importCatalogue } from '../src/services/catalogue.js'
import { createOrganisationWithKey } from '../src/services/organisations.js'

export interface Seed {
  organisationId: string
  apiKey: string
  /** A carbon quote created through the running API before the scenarios start. */
  quoteId: string
  /** Its credits total, the usual amount allocated. */
  creditsTotal: number
}

export interface Scenario {
  name: string
  /** 'baseline' runs against the bare Fastify + INSERT server. */
  target: 'baseline' | 'api'
  method: 'GET' | 'POST'
  path: (seed: Seed) => string
  body?: (seed: Seed) => unknown
  headers?: (seed: Seed) => Record<string, string>
  /** Called per request: a fresh header set (e.g. a new Idempotency-Key). */
  perRequestHeaders?: () => Record<string, string>
  expectStatus: number
  /** Target: at least this × baseline req/s. */
  minRatio?: number
  /** Also run at half the measured rate and check p99 stays within this many ms. */
  halfRateP99MaxMs?: number
}

/** The representative request body the baseline parses and stores (a carbon quote request). */
export const sampleQuoteBody = (organisationId: string) => ({ ...FLORIST_EXAMPLE, organisationId })

export async function seed(db: Kysely<Database>): Promise<Omit<Seed, 'quoteId' | 'creditsTotal'>> {
  await importCatalogue(db, demoCatalogue(), new Date())
  const { organisation, apiKey } = await createOrganisationWithKey(
    db,
    {
      parentId: null,
      tradingName: 'Bench merchant',
      legalName: 'Bench merchant Ltd',
      address: { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
      currencyCode: 'GBP',
      mcc: '5992',
    },
    'live',
    new Date(),
  )
  return { organisationId: organisation.id, apiKey }
}

const bearer = (s: Seed) => ({ authorization: `Bearer ${s.apiKey}` })
const allocationBody = (s: Seed) => ({ organisationId: s.organisationId, quoteId: s.quoteId, credits: { amount: s.creditsTotal } })
const replayKey = randomUUID()

export const scenarios: Scenario[] = [
  {
    name: 'baseline: POST jsonb INSERT',
    target: 'baseline',
    method: 'POST',
    path: () => '/baseline',
    body: (s) => sampleQuoteBody(s.organisationId),
    expectStatus: 201,
  },
  {
    name: 'GET /v3/organisations/:id',
    target: 'api',
    method: 'GET',
    path: (s) => `/v3/organisations/${s.organisationId}`,
    headers: bearer,
    expectStatus: 200,
  },
  {
    name: 'POST /quotes/carbon',
    target: 'api',
    method: 'POST',
    path: () => '/quotes/carbon',
    body: (s) => sampleQuoteBody(s.organisationId),
    headers: bearer,
    expectStatus: 201,
    minRatio: 0.7,
    halfRateP99MaxMs: 25,
  },
  {
    // A quote and its session in one INSERT statement.
    name: 'POST /v3/post-purchase/sessions',
    target: 'api',
    method: 'POST',
    path: () => '/v3/post-purchase/sessions',
    body: (s) => ({ ...sampleQuoteBody(s.organisationId), sdkVariant: 'embedded' }),
    headers: bearer,
    expectStatus: 200,
  },
  {
    name: 'POST /funds/allocations (new keys)',
    target: 'api',
    method: 'POST',
    path: () => '/funds/allocations',
    body: allocationBody,
    headers: bearer,
    perRequestHeaders: () => ({ 'idempotency-key': randomUUID() }),
    expectStatus: 201,
    minRatio: 0.5,
  },
  {
    name: 'POST /funds/allocations (replays)',
    target: 'api',
    method: 'POST',
    path: () => '/funds/allocations',
    body: allocationBody,
    headers: (s) => ({ ...bearer(s), 'idempotency-key': replayKey }),
    expectStatus: 201,
    minRatio: 0.8,
  },
]
