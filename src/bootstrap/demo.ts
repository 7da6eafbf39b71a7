// First embedded start: a demo organisation and key, printed once and saved to DATA_DIR/demo-credentials.json.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { countOrganisations } from '../db/repositories/organisations.js'
import { demoCatalogue, importCatalogue } from '../services/catalogue.js'
import { findActiveSubtreeIds, findOrganisationById } from '../db/repositories/organisations.js'
import type { Quote } from '../db/repositories/quotes.js'
import { AppError } from '../errors.js'
import { noMetrics } from '../metrics.js'
import { AccessResolver, operatorPrincipal } from '../services/access.js'
import { AllocationStore } from '../services/allocation-store.js'
import { allocateFunds, reverseFundsAllocation } from '../services/allocations.js'
import { createChildOrganisation, createOrganisationWithKey, setAllowedOrigins } from '../services/organisations.js'
import { createUserAsOperator } from '../services/hub/users.js'
import { QuoteStore } from '../services/quote-store.js'
import { createQuote } from '../services/quotes.js'
import { ReferenceDataCache } from '../services/reference-data.js'
import { resetRollups } from '../services/summary-rollups.js'
import { noWebhookWake } from '../services/webhooks/events.js'

export interface DemoCredentials {
  organisationId: string
  apiKey: string
  /** The demo organisation's Hub admin, and the one-time link to set its password (24 h; not saved to the file). */
  hubAdmin?: { email: string; setPasswordUrl: string }
  createdAt: string
  note: string
}

export const demoCredentialsPath = (dataDir: string): string => join(dataDir, 'demo-credentials.json')

/**
 * Creates the demo organisation and loads the illustrative demo catalogue when the database has no
 * organisation yet; returns the credentials when it did.
 */
export const DEMO_ADMIN_EMAIL = 'admin@demo.canopy.invalid'

export async function bootstrapDemo(
  db: Kysely<Database>,
  dataDir: string,
  now: Date,
  publicBaseUrl = 'http://127.0.0.1:3000',
): Promise<DemoCredentials | undefined> {
  if ((await countOrganisations(db)) > 0) return undefined
  await importCatalogue(db, demoCatalogue(), now)
  const { organisation, apiKey } = await createOrganisationWithKey(
    db,
    {
      parentId: null,
      tradingName: 'Blossom & Bloom (demo)',
      legalName: 'Canopy Demo Florist Ltd',
      organisationReference: 'DEMO-001',
      address: { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
      currencyCode: 'GBP',
      mcc: '5992',
    },
    'test',
    now,
  )
  const credentials: DemoCredentials = {
    organisationId: organisation.id,
    apiKey,
    createdAt: now.toISOString(),
    note: 'Demo organisation of the embedded database (MCC 5992, GBR, GBP). Keep this file private.',
  }
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(demoCredentialsPath(dataDir), `${JSON.stringify({ ...credentials, hubAdminEmail: DEMO_ADMIN_EMAIL }, null, 2)}\n`, {
    mode: 0o600,
  })
  // The Hub's demo admin: the set-password link is printed once and never stored in clear.
  const admin = await createUserAsOperator(
    db,
    { organisationId: organisation.id, email: DEMO_ADMIN_EMAIL, role: 'admin' },
    { now, publicBaseUrl },
  )
  return { ...credentials, hubAdmin: { email: admin.user.email, setPasswordUrl: admin.setPasswordUrl } }
}

export const hasDemoCredentials = (dataDir: string): boolean => existsSync(demoCredentialsPath(dataDir))

/**
 * DEMO_ALLOWED_ORIGINS: adds origins (comma-separated) to the demo organisation's allowed origins, keeping those it
 * has, so that a page there (the demo shop of npm run demo) can read its sessions. Returns the list now in force;
 * undefined when there is no demo organisation in this data directory.
 */
export async function allowDemoOrigins(db: Kysely<Database>, dataDir: string, origins: string, now: Date): Promise<string[] | undefined> {
  if (!hasDemoCredentials(dataDir)) return undefined
  const { organisationId } = JSON.parse(readFileSync(demoCredentialsPath(dataDir), 'utf8')) as DemoCredentials
  const organisation = await findOrganisationById(db, organisationId)
  if (!organisation) return undefined
  const added = origins
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean)
  const result = await setAllowedOrigins(db, { organisationId, allowedOrigins: [...(organisation.allowedOrigins ?? []), ...added] }, now)
  return result.effectiveAllowedOrigins
}

/** How much history the demo activity covers: four weeks before the demo organisation was created. */
const DEMO_ACTIVITY_DAYS = 28
const DAY_MS = 86_400_000

/** Deterministic pseudo-random numbers (mulberry32): the same plan on every start, so seeding is idempotent. */
function pseudoRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** The demo's child organisations (found by reference, created once): a second shop in GBP and one in EUR. */
const DEMO_CHILDREN = [
  {
    reference: 'DEMO-002',
    tradingName: 'Blossom & Bloom Manchester (demo)',
    address: { line1: '12 Deansgate', city: 'Manchester', postalCode: 'M3 2BW', countryCode: 'GBR' },
    currencyCode: 'GBP',
  },
  {
    reference: 'DEMO-003',
    tradingName: 'Blossom & Bloom Dublin (demo)',
    address: { line1: '8 Grafton Street', city: 'Dublin', postalCode: 'D02 VF65', countryCode: 'IRL' },
    currencyCode: 'EUR',
  },
] as const

/**
 * DEMO_ACTIVITY (npm run demo): four weeks of allocations and some reversals for the demo organisation and two child
 * organisations, written through the real services with the time each would have had, so that summaries and the
 * reconciliation list have something to show. The plan is fixed by the demo organisation's creation time and every
 * allocation has its own Idempotency-Key, so a restart writes nothing twice (and finishes a seeding cut short). When
 * it wrote anything, the summary rollups are reset (those records are in the past): the worker rolls them up again.
 */
export async function seedDemoActivity(
  db: Kysely<Database>,
  dataDir: string,
): Promise<{ allocations: number; reversals: number; written: number } | undefined> {
  if (!hasDemoCredentials(dataDir)) return undefined
  const { organisationId } = JSON.parse(readFileSync(demoCredentialsPath(dataDir), 'utf8')) as DemoCredentials
  const parent = await findOrganisationById(db, organisationId)
  if (!parent) return undefined
  const anchor = parent.createdAt.getTime()
  let now = anchor
  const clock = () => new Date(now)
  const access = new AccessResolver(db, 0, () => now)
  const reference = new ReferenceDataCache(db, 0, () => now)
  const deps = {
    db,
    access,
    reference,
    clock,
    quotes: new QuoteStore(db, 100),
    allocations: new AllocationStore(db),
    metrics: noMetrics,
    webhooks: noWebhookWake,
    // The demo reuses a few quotes per shop over its weeks of activity: each stays allocatable for all of them.
    quoteRetentionDays: DEMO_ACTIVITY_DAYS + 1,
    // No process serves sessions yet: nothing to forget.
    sessionOrigins: { forget: () => {} },
  }
  // The demo's activity is the operator's doing (the audit log says so), in the demo key's test mode.
  const principal = { ...operatorPrincipal(organisationId), mode: 'test' as const }
  const start = anchor - (anchor % DAY_MS) - DEMO_ACTIVITY_DAYS * DAY_MS

  // The child organisations, created once (as their parent's API key would).
  const existing = await Promise.all((await findActiveSubtreeIds(db, organisationId)).map((id) => findOrganisationById(db, id)))
  const shops: { id: string; currencyCode: string; city: string; countryCode: string }[] = [
    { id: organisationId, currencyCode: parent.currencyCode, city: parent.address.city, countryCode: parent.address.countryCode },
  ]
  now = start
  for (const child of DEMO_CHILDREN) {
    const found = existing.find((o) => o?.organisationReference === child.reference)
    const organisation =
      found ??
      (await createChildOrganisation(deps, principal, {
        parentId: organisationId,
        tradingName: child.tradingName,
        legalName: child.tradingName.replace(' (demo)', ' Ltd (demo)'),
        organisationReference: child.reference,
        address: child.address,
        currencyCode: child.currencyCode,
        mcc: '5992',
      }))
    shops.push({ id: organisation.id, currencyCode: child.currencyCode, city: child.address.city, countryCode: child.address.countryCode })
  }

  // The plan: 2–6 allocations a day, some with a contribution to one or both partners; one in about fifteen reversed
  // within two days. Quotes (a few per shop) are reused with the amounts each consumer paid.
  const random = pseudoRandom(20261124)
  const events: { at: number; kind: 'allocate' | 'reverse'; index: number }[] = []
  const plans: { shop: number; variant: number; credits: number | null; contribution: number | null; partners: 'one' | 'both' }[] = []
  for (let day = 0; day < DEMO_ACTIVITY_DAYS; day++) {
    const count = 2 + Math.floor(random() * 5)
    for (let n = 0; n < count; n++) {
      const at = start + day * DAY_MS + Math.floor((7 + random() * 14) * 3_600_000)
      const index = plans.length
      const roll = random()
      plans.push({
        shop: roll < 0.55 ? 0 : roll < 0.8 ? 1 : 2,
        variant: Math.floor(random() * 3),
        credits: random() < 0.85 ? Math.round(100 + random() * 1200) / 100 : null,
        contribution: random() < 0.4 ? ([0.5, 1, 2, 5][Math.floor(random() * 4)] ?? 1) : null,
        partners: random() < 0.5 ? 'one' : 'both',
      })
      events.push({ at, kind: 'allocate', index })
      if (random() < 0.07)
        events.push({ at: Math.min(at + Math.floor((2 + random() * 44) * 3_600_000), anchor - 60_000), kind: 'reverse', index })
    }
  }
  events.sort((a, b) => a.at - b.at || (a.kind === 'allocate' ? -1 : 1))

  const quotes = new Map<string, Quote>()
  const allocationIds = new Map<number, string>()
  let written = 0
  let reversals = 0
  for (const event of events) {
    now = event.at
    const plan = plans[event.index] as (typeof plans)[number]
    const shop = shops[plan.shop] as (typeof shops)[number]
    if (event.kind === 'reverse') {
      const id = allocationIds.get(event.index)
      if (!id) continue
      reversals++
      try {
        await reverseFundsAllocation(deps, principal, id)
        written++
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'ALREADY_REVERSED')) throw error
      }
      continue
    }
    const key = `demo-activity-${event.index}`
    // Written by an earlier start: nothing to do (its quote would be another one, so no replay either).
    const done = await deps.allocations.findByKey({ organisationId: shop.id, idempotencyKey: key })
    if (done) {
      allocationIds.set(event.index, done.id)
      continue
    }
    const quoteKey = `${plan.shop}|${plan.variant}`
    let quote = quotes.get(quoteKey)
    if (!quote) {
      // Variants: a consumer in the shop's country (projects matched to it where the catalogue has some), or anywhere.
      quote = await createQuote(
        deps,
        principal,
        {
          organisationId: shop.id,
          locale: 'en-GB',
          consumer: { reference: `demo-consumer-${plan.variant}`, countryCode: plan.variant === 2 ? 'DEU' : shop.countryCode },
          merchant: null,
          transaction: { amount: [24.5, 61.99, 138][plan.variant] ?? 24.5, currencyCode: shop.currencyCode },
          orderItems: null,
          matchConsumerLocation: plan.variant !== 0,
          responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false },
          origin: 'quote',
        },
        'carbon',
      )
      quotes.set(quoteKey, quote)
    }
    const partners = quote.locked.contribution.impactPartnerIds
    const result = await allocateFunds(
      deps,
      principal,
      {
        organisationId: shop.id,
        quoteId: quote.id,
        credits:
          plan.credits === null && plan.contribution === null ? { amount: 1 } : plan.credits === null ? null : { amount: plan.credits },
        contribution:
          plan.contribution === null
            ? null
            : {
                amount: plan.contribution,
                impactPartnerIds: plan.partners === 'one' ? partners.slice(event.index % 2, (event.index % 2) + 1) : undefined,
              },
      },
      key,
    )
    if (!result.replayed) written++
    allocationIds.set(event.index, result.allocation.id)
  }
  await deps.allocations.drain()
  await deps.quotes.drain()
  if (written > 0) await resetRollups(db, new Date())
  return { allocations: plans.length, reversals, written }
}
