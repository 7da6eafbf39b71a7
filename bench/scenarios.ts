// Benchmark scenarios, in groups. Each group gets its own scratch database (migrated, then seeded by the
// group's `seed`) and its own API process (with the group's extra `env`); every scenario is measured
// against the baseline (bench/baseline.ts), alternating with it. docs/benchmarks.md explains the method
// and how to add a group.
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../src/db/database.js'
import { insertEndpoint } from '../src/db/repositories/webhooks.js'
import { FLORIST_EXAMPLE } from '../src/http/schemas/quotes.js'
import { demoCatalogue, importCatalogue } from '../src/services/catalogue.js'
import { createOrganisationWithKey } from '../src/services/organisations.js'
import type { ResolvedRequest } from './harness/load.js'

/** Targets a scenario is checked against (docs/benchmarks.md, "Targets"). */
export interface Target {
  /** The worst ratio to the baseline over all connection counts must be at least this. */
  minRatio: number
  /** Reported, not enforced. */
  stretchRatio?: number
}

export interface Scenario<D> {
  name: string
  method: ResolvedRequest['method']
  path: (data: D) => string
  body?: (data: D) => unknown
  headers?: (data: D) => Record<string, string>
  /** Called per request: headers that must differ between requests (e.g. a new Idempotency-Key). */
  perRequestHeaders?: () => Record<string, string>
  expectStatus: number
  target?: Target
  /** Also drive it at half its measured req/s (fixed overall rate) and check that p99 stays within this. */
  halfRateP99MaxMs?: number
  /** Checked against another scenario of the same run: at every count, this ratio ÷ that one's ≥ minRatio. */
  comparedWith?: Comparison
}

export interface Comparison {
  /** The other scenario's name. */
  scenario: string
  minRatio: number
  /** What the comparison measures, e.g. "metrics on ÷ off". */
  label: string
}

export interface ScenarioGroup<S, D> {
  /** Lowercase letters, digits and underscores: it names the group's database. */
  name: string
  /** Extra environment for the group's API process (on top of the bench defaults, see bench/run.ts). */
  env?: Record<string, string>
  /** Fills the group's freshly migrated database before its API starts (e.g. a large table to page through). */
  seed: (db: Kysely<Database>) => Promise<S>
  /** Runs once the group's API answers (e.g. creates a quote through it); its result is what scenarios get. */
  prepare?: (apiUrl: string, seeded: S) => Promise<D>
  scenarios: Scenario<D>[]
}

/** A scenario as the harness runs it: its requests resolved against the group's data. */
export interface ScenarioInfo {
  name: string
  target?: Target
  halfRateP99MaxMs?: number
  comparedWith?: Comparison
}

/** A group with its data types erased, as the harness drives it. */
export interface BenchGroup {
  name: string
  env: Record<string, string>
  scenarios: ScenarioInfo[]
  seed(db: Kysely<Database>): Promise<void>
  /** After the API is up: the resolved request of each scenario, by name. */
  prepare(apiUrl: string): Promise<Map<string, ResolvedRequest>>
}

export function defineGroup<S, D = S>(group: ScenarioGroup<S, D>): BenchGroup {
  if (!/^[a-z0-9_]+$/.test(group.name)) throw new Error(`group name ${JSON.stringify(group.name)}: use [a-z0-9_]`)
  let seeded: S | undefined
  return {
    name: group.name,
    env: group.env ?? {},
    scenarios: group.scenarios.map(({ name, target, halfRateP99MaxMs, comparedWith }) => ({
      name,
      target,
      halfRateP99MaxMs,
      comparedWith,
    })),
    async seed(db) {
      seeded = await group.seed(db)
    },
    async prepare(apiUrl) {
      if (seeded === undefined) throw new Error(`group ${group.name} was not seeded`)
      // Without a prepare step the seeded data is the scenarios' data (D defaults to S).
      const data = group.prepare ? await group.prepare(apiUrl, seeded) : (seeded as unknown as D)
      return new Map(
        group.scenarios.map((s) => {
          const body = s.body?.(data)
          const request: ResolvedRequest = {
            method: s.method,
            path: s.path(data),
            headers: s.headers?.(data) ?? {},
            ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
            ...(s.perRequestHeaders ? { perRequestHeaders: s.perRequestHeaders } : {}),
            expectStatus: s.expectStatus,
          }
          return [s.name, request]
        }),
      )
    },
  }
}

/** Peak RSS of each group's API process over the whole bench (docs/benchmarks.md, "Targets"). */
export const API_PEAK_RSS_MAX_MB = 200

/** The representative request body: a carbon quote request. The baseline parses and stores the same body. */
export const sampleQuoteBody = (organisationId: string) => ({ ...FLORIST_EXAMPLE, organisationId })

/** What the baseline server is sent: the quote body, for an organisation it never looks up. */
export const baselineRequest: ResolvedRequest = {
  method: 'POST',
  path: '/baseline',
  headers: {},
  body: JSON.stringify(sampleQuoteBody('00000000-0000-4000-8000-000000000000')),
  expectStatus: 201,
}
export const BASELINE_NAME = 'baseline: Fastify + one jsonb INSERT'

// --- The default group ---------------------------------------------------------------------------------

interface Merchant {
  organisationId: string
  apiKey: string
}

export interface MerchantWithQuote extends Merchant {
  /** A carbon quote created through the running API before the scenarios start. */
  quoteId: string
  /** Its credits total, the usual amount allocated. */
  creditsTotal: number
}

/** The demo catalogue and one merchant organisation (GBR, MCC 5992) with a live API key. */
export async function seedMerchant(db: Kysely<Database>): Promise<Merchant> {
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

/** Creates one quote through the API, for the allocation scenarios. */
export async function createQuote(apiUrl: string, merchant: Merchant): Promise<MerchantWithQuote> {
  const response = await fetch(`${apiUrl}/quotes/carbon`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${merchant.apiKey}` },
    body: JSON.stringify(sampleQuoteBody(merchant.organisationId)),
  })
  if (response.status !== 201) throw new Error(`creating the bench quote: ${response.status} ${await response.text()}`)
  const quote = (await response.json()) as { quoteId: string; credits: { amounts: { total: number } } }
  return { ...merchant, quoteId: quote.quoteId, creditsTotal: quote.credits.amounts.total }
}

const bearer = (m: Merchant) => ({ authorization: `Bearer ${m.apiKey}` })
const allocationBody = (m: MerchantWithQuote) => ({
  organisationId: m.organisationId,
  quoteId: m.quoteId,
  credits: { amount: m.creditsTotal },
})
/** A new allocation of the group's quote (a new Idempotency-Key per request). */
const newAllocation = (name: string, body: (m: MerchantWithQuote) => unknown = allocationBody): Scenario<MerchantWithQuote> => ({
  name,
  method: 'POST',
  path: () => '/funds/allocations',
  body,
  headers: bearer,
  perRequestHeaders: () => ({ 'idempotency-key': randomUUID() }),
  expectStatus: 201,
})
const replayKey = randomUUID()
const QUOTE_METRICS_OFF = 'POST /quotes/carbon (metrics off)'

const core = defineGroup<Merchant, MerchantWithQuote>({
  name: 'core',
  seed: seedMerchant,
  prepare: createQuote,
  scenarios: [
    {
      name: 'GET /v3/organisations/:id',
      method: 'GET',
      path: (m) => `/v3/organisations/${m.organisationId}`,
      headers: bearer,
      expectStatus: 200,
    },
    {
      name: 'POST /quotes/carbon',
      method: 'POST',
      path: () => '/quotes/carbon',
      body: (m) => sampleQuoteBody(m.organisationId),
      headers: bearer,
      expectStatus: 201,
      target: { minRatio: 0.7, stretchRatio: 0.85 },
      halfRateP99MaxMs: 25,
      comparedWith: { scenario: QUOTE_METRICS_OFF, minRatio: 0.95, label: 'metrics on ÷ off' },
    },
    {
      // A quote and its session in one INSERT statement.
      name: 'POST /v3/post-purchase/sessions',
      method: 'POST',
      path: () => '/v3/post-purchase/sessions',
      body: (m) => ({ ...sampleQuoteBody(m.organisationId), sdkVariant: 'embedded' }),
      headers: bearer,
      expectStatus: 200,
      target: { minRatio: 0.6 },
    },
    { ...newAllocation('POST /funds/allocations (new keys)'), target: { minRatio: 0.6 } },
    {
      // The first request (in the warm-up) creates the allocation; every later one replays it.
      name: 'POST /funds/allocations (replays)',
      method: 'POST',
      path: () => '/funds/allocations',
      body: allocationBody,
      headers: (m) => ({ ...bearer(m), 'idempotency-key': replayKey }),
      expectStatus: 201,
      target: { minRatio: 1.5 },
    },
  ],
})

/** The core group's API serves metrics (the default); this one runs with METRICS_PORT=0, for the cost of metrics. */
const metricsOff = defineGroup<Merchant>({
  name: 'metrics_off',
  env: { METRICS_PORT: '0' },
  seed: seedMerchant,
  scenarios: [
    {
      name: QUOTE_METRICS_OFF,
      method: 'POST',
      path: () => '/quotes/carbon',
      body: (m) => sampleQuoteBody(m.organisationId),
      headers: bearer,
      expectStatus: 201,
    },
  ],
})

/**
 * A PSP (relativeProfitShare 0.2, a root) and its merchant (0.6 of it), the merchant allocating with its own key:
 * every allocation writes two profit-share lines in its row (docs/reconciliation.md, "Profit share"). With
 * `billing`, the merchant's share is billed in USD (its line also carries the currency, the rate and the amount).
 */
async function seedProfitShareTree(db: Kysely<Database>, billing: boolean): Promise<Merchant> {
  await importCatalogue(db, demoCatalogue(), new Date())
  const address = { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' }
  const psp = await createOrganisationWithKey(
    db,
    { parentId: null, tradingName: 'Bench PSP', legalName: 'Bench PSP Ltd', address, currencyCode: 'GBP', relativeProfitShare: '0.2' },
    'live',
    new Date(),
  )
  const { organisation, apiKey } = await createOrganisationWithKey(
    db,
    {
      parentId: psp.organisation.id,
      tradingName: 'Bench merchant',
      legalName: 'Bench merchant Ltd',
      address,
      currencyCode: 'GBP',
      mcc: '5992',
      relativeProfitShare: '0.6',
      ...(billing ? { billing: { currencyCode: 'USD' } } : {}),
    },
    'live',
    new Date(),
  )
  return { organisationId: organisation.id, apiKey }
}

const profitShareGroup = (name: string, label: string, billing: boolean) =>
  defineGroup<Merchant, MerchantWithQuote>({
    name,
    seed: (db) => seedProfitShareTree(db, billing),
    prepare: createQuote,
    scenarios: [newAllocation(`POST /funds/allocations (new keys, ${label})`)],
  })

/** A new allocation paying for the quote's credits and a contribution (split among the demo's contribution partners). */
const withContribution = defineGroup<Merchant, MerchantWithQuote>({
  name: 'contribution',
  seed: seedMerchant,
  prepare: createQuote,
  scenarios: [
    newAllocation('POST /funds/allocations (new keys, credits + contribution)', (m) => ({
      ...allocationBody(m),
      contribution: { amount: 5 },
    })),
  ],
})

/**
 * The merchant has one webhook endpoint subscribed to every event, so each allocation also writes its event row and a
 * delivery. The worker is off: this measures the write; delivering is `npm run bench:webhooks`'s.
 */
const withWebhookEndpoint = defineGroup<Merchant, MerchantWithQuote>({
  name: 'webhook_endpoint',
  env: { WEBHOOK_WORKER: 'false' },
  seed: async (db) => {
    const merchant = await seedMerchant(db)
    const now = new Date()
    await insertEndpoint(
      db,
      {
        id: randomUUID(),
        organisationId: merchant.organisationId,
        url: 'https://hooks.example.com/canopy',
        description: 'bench',
        enabledEvents: ['*'],
        format: 'standard',
        status: 'enabled',
        disabledReason: null,
        failingSince: null,
        createdAt: now,
        updatedAt: now,
      },
      { id: randomUUID(), secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    )
    return merchant
  },
  prepare: createQuote,
  scenarios: [newAllocation('POST /funds/allocations (new keys, one webhook endpoint)')],
})

/**
 * Every group, in the order they run. A scenario that needs other data or another API configuration
 * (reconciliation pages over a large table, allocations with a webhook endpoint) goes in a group of its own,
 * as metrics_off does.
 */
export const groups: BenchGroup[] = [
  core,
  metricsOff,
  profitShareGroup('profit_share', 'profit share: 2 lines', false),
  profitShareGroup('profit_share_fx', 'profit share: 2 lines, one billed in USD', true),
  withContribution,
  withWebhookEndpoint,
]
