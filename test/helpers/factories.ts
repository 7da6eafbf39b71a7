// Test fixtures created through the real services, each with unique data.
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { createOrganisationWithKey, type OrganisationInput } from '../../src/services/organisations.js'

export interface OrgFixture {
  organisationId: string
  apiKey: string
  apiKeyPrefix: string
}

export async function createOrg(
  db: Kysely<Database>,
  overrides: Partial<OrganisationInput> & { countryCode?: string } = {},
  now = new Date('2026-11-21T09:00:00.000Z'),
): Promise<OrgFixture> {
  const { countryCode = 'GBR', ...rest } = overrides
  const suffix = randomUUID().slice(0, 8)
  const result = await createOrganisationWithKey(
    db,
    {
      parentId: null,
      tradingName: `Test merchant ${suffix}`,
      legalName: `Test merchant ${suffix} Ltd`,
      address: { line1: '1 High Street', city: 'London', postalCode: 'SW1A 1AA', countryCode },
      currencyCode: 'GBP',
      mcc: '5992',
      ...rest,
    },
    'live',
    now,
  )
  return { organisationId: result.organisation.id, apiKey: result.apiKey, apiKeyPrefix: result.apiKeyPrefix }
}

export async function importDemoCatalogue(db: Kysely<Database>): Promise<void> {
  const { demoCatalogue, importCatalogue } = await import('../../src/services/catalogue.js')
  await importCatalogue(db, demoCatalogue(), new Date('2026-11-21T08:00:00.000Z'))
}

/** The florist request of the real service's documentation (GBP 47.97, MCC 5992, London). */
export const floristQuote = (organisationId: string, extra: Record<string, unknown> = {}) => ({
  organisationId,
  locale: 'en-GB',
  consumer: { reference: 'consumer_123', countryCode: 'GBR' },
  merchant: {
    name: 'Blossom & Bloom',
    mcc: '5992',
    address: { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
  },
  transaction: { amount: 47.97, currencyCode: 'GBP' },
  ...extra,
})
