// Organisations: created by operators (CLI, with a first API key) or as children through the API.
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { AddressJson, Database, OrganisationRow } from '../db/database.js'
import { findOrganisationById, insertOrganisation } from '../db/repositories/organisations.js'
import { isKnownCountry } from '../domain/countries.js'
import { DomainError } from '../domain/errors.js'
import { isPricedCurrency } from '../domain/fx.js'
import { formatRate } from '../domain/money.js'
import { AppError, notFound } from '../errors.js'
import type { AccessResolver, Principal } from './access.js'
import { createApiKey, type KeyMode } from './api-keys.js'

export type TaxLiability = 'platform' | 'organisation'

export interface OrganisationInput {
  parentId: string | null
  tradingName: string
  legalName: string
  organisationReference?: string | null | undefined
  address: AddressJson
  currencyCode: string
  website?: string | null | undefined
  mcc?: string | null | undefined
  /** Proportion of the impact amount, as a decimal string, e.g. "0.2". */
  serviceFeeRate?: string | undefined
  taxLiability?: TaxLiability | undefined
}

export interface Organisation {
  organisationId: string
  parentOrganisationId: string | null
  organisationReference: string | null
  tradingName: string
  legalName: string
  address: AddressJson
  currencyCode: string
  website: string | null
  mcc: string | null
  serviceFeeRate: string
  taxLiability: TaxLiability
  status: 'active' | 'inactive'
  createdAt: string
}

export const toOrganisation = (row: OrganisationRow): Organisation => ({
  organisationId: row.id,
  parentOrganisationId: row.parent_id,
  organisationReference: row.organisation_reference,
  tradingName: row.trading_name,
  legalName: row.legal_name,
  address: row.address,
  currencyCode: row.currency_code,
  website: row.website,
  mcc: row.mcc,
  serviceFeeRate: formatRate(row.service_fee_rate),
  taxLiability: row.tax_liability,
  status: row.status,
  createdAt: row.created_at.toISOString(),
})

const SERVICE_FEE_PATTERN = /^(0(\.\d{1,6})?|1(\.0{1,6})?)$/

function validate(input: OrganisationInput, path: string): void {
  const country = input.address.countryCode
  if (!isKnownCountry(country)) {
    throw new DomainError('UNKNOWN_COUNTRY', `country code ${country} is not an iso 3166-1 alpha-3 country`, `${path}/address/countryCode`)
  }
  if (!isPricedCurrency(input.currencyCode)) {
    throw new DomainError('UNSUPPORTED_CURRENCY', `currency ${input.currencyCode} is not supported`, `${path}/currencyCode`)
  }
  if (input.mcc != null && !/^\d{4}$/.test(input.mcc)) {
    throw new DomainError('INVALID_MCC', 'mcc must be 4 digits', `${path}/mcc`)
  }
  if (input.serviceFeeRate !== undefined && !SERVICE_FEE_PATTERN.test(input.serviceFeeRate)) {
    throw new AppError('BAD_REQUEST', 'service fee must be a proportion between 0 and 1 with at most 6 decimals')
  }
}

async function insert(db: Kysely<Database>, input: OrganisationInput, now: Date): Promise<OrganisationRow> {
  return insertOrganisation(db, {
    id: randomUUID(),
    parent_id: input.parentId,
    trading_name: input.tradingName,
    legal_name: input.legalName,
    organisation_reference: input.organisationReference ?? null,
    address: JSON.stringify(input.address),
    country_code: input.address.countryCode,
    currency_code: input.currencyCode,
    website: input.website ?? null,
    mcc: input.mcc ?? null,
    service_fee_rate: input.serviceFeeRate ?? '0.2',
    tax_liability: input.taxLiability ?? 'platform',
    status: 'active',
    created_at: now,
  })
}

/** Operator path (CLI, demo bootstrap): an organisation, optionally under a parent, with its first API key. */
export async function createOrganisationWithKey(
  db: Kysely<Database>,
  input: OrganisationInput,
  mode: KeyMode,
  now: Date,
): Promise<{ organisation: Organisation; apiKey: string; apiKeyPrefix: string }> {
  validate(input, '')
  return db.transaction().execute(async (trx) => {
    if (input.parentId && !(await findOrganisationById(trx, input.parentId))) throw notFound('parent organisation')
    const row = await insert(trx, input, now)
    const key = await createApiKey(trx, row.id, mode, now)
    return { organisation: toOrganisation(row), apiKey: key.apiKey, apiKeyPrefix: key.prefix }
  })
}

/**
 * API path: a child of an organisation the caller may act on. Pricing settings (service fee, tax liability)
 * are inherited from the parent and only an operator can change them.
 */
export async function createChildOrganisation(
  db: Kysely<Database>,
  access: AccessResolver,
  principal: Principal,
  input: Omit<OrganisationInput, 'serviceFeeRate' | 'taxLiability'> & { parentId: string },
  now: Date,
): Promise<Organisation> {
  await access.assertCanActOn(principal, input.parentId, '/parentOrganisationId')
  validate(input, '')
  const parent = await findOrganisationById(db, input.parentId)
  if (!parent) throw notFound('parent organisation')
  const row = await insert(db, { ...input, serviceFeeRate: parent.service_fee_rate, taxLiability: parent.tax_liability }, now)
  access.forgetSubtrees()
  return toOrganisation(row)
}

export async function getOrganisation(
  db: Kysely<Database>,
  access: AccessResolver,
  principal: Principal,
  id: string,
): Promise<Organisation> {
  if (!(await access.canSee(principal, id))) throw notFound('organisation')
  const row = await findOrganisationById(db, id)
  if (!row) throw notFound('organisation')
  return toOrganisation(row)
}
