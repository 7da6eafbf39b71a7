// Organisations: created by operators (CLI, with a first API key) or as children through the API.
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { AddressJson, Database } from '../db/database.js'
import { findOrganisationById, insertOrganisation, type Organisation, type TaxLiability } from '../db/repositories/organisations.js'
import { isKnownCountry } from '../domain/countries.js'
import { DomainError } from '../domain/errors.js'
import { isPricedCurrency } from '../domain/fx.js'
import type { FxTable } from '../domain/types.js'
import { AppError, notFound } from '../errors.js'
import type { AccessResolver, Principal } from './access.js'
import { createApiKey, type KeyMode } from './api-keys.js'
import { loadFxInUse } from './fx.js'
import type { ReferenceDataCache } from './reference-data.js'
import { newId } from '../ids.js'

export type { Organisation, TaxLiability }

export interface OrganisationDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
  /** The exchange rates in use decide which currencies an organisation may have. */
  readonly reference: Pick<ReferenceDataCache, 'fxInUse'>
  readonly clock: Clock
}

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

const SERVICE_FEE_PATTERN = /^(0(\.\d{1,6})?|1(\.0{1,6})?)$/

function validate(input: OrganisationInput, fx: FxTable): void {
  const country = input.address.countryCode
  if (!isKnownCountry(country)) {
    throw new DomainError('UNKNOWN_COUNTRY', `country code ${country} is not an iso 3166-1 alpha-3 country`, '/address/countryCode')
  }
  if (!isPricedCurrency(input.currencyCode, fx)) {
    throw new DomainError('UNSUPPORTED_CURRENCY', `currency ${input.currencyCode} is not supported`, '/currencyCode')
  }
  if (input.mcc != null && !/^\d{4}$/.test(input.mcc)) {
    throw new DomainError('INVALID_MCC', 'mcc must be 4 digits', '/mcc')
  }
  if (input.serviceFeeRate !== undefined && !SERVICE_FEE_PATTERN.test(input.serviceFeeRate)) {
    throw new AppError('INVALID_SERVICE_FEE', 'service fee must be a proportion between 0 and 1 with at most 6 decimals')
  }
}

const newOrganisation = (input: OrganisationInput, now: Date): Organisation => ({
  id: newId(),
  parentId: input.parentId,
  tradingName: input.tradingName,
  legalName: input.legalName,
  organisationReference: input.organisationReference ?? null,
  address: input.address,
  currencyCode: input.currencyCode,
  website: input.website ?? null,
  mcc: input.mcc ?? null,
  serviceFeeRate: input.serviceFeeRate ?? '0.2',
  taxLiability: input.taxLiability ?? 'platform',
  status: 'active',
  createdAt: now,
})

/** Operator path (CLI, demo bootstrap): an organisation, optionally under a parent, with its first API key. */
export async function createOrganisationWithKey(
  db: Kysely<Database>,
  input: OrganisationInput,
  mode: KeyMode,
  now: Date,
): Promise<{ organisation: Organisation; apiKey: string; apiKeyPrefix: string }> {
  validate(input, (await loadFxInUse(db)).table)
  return db.transaction().execute(async (trx) => {
    if (input.parentId && !(await findOrganisationById(trx, input.parentId))) throw notFound('parent organisation')
    const organisation = await insertOrganisation(trx, newOrganisation(input, now))
    const key = await createApiKey(trx, organisation.id, mode, now)
    return { organisation, apiKey: key.apiKey, apiKeyPrefix: key.prefix }
  })
}

/**
 * API path: a child of an organisation the caller may act on. Pricing settings (service fee, tax liability)
 * are inherited from the parent and only an operator can change them.
 */
export async function createChildOrganisation(
  deps: OrganisationDeps,
  principal: Principal,
  input: Omit<OrganisationInput, 'serviceFeeRate' | 'taxLiability'> & { parentId: string },
): Promise<Organisation> {
  await deps.access.assertCanActOn(principal, input.parentId, '/parentOrganisationId')
  validate(input, (await deps.reference.fxInUse()).table)
  const parent = await findOrganisationById(deps.db, input.parentId)
  if (!parent) throw notFound('parent organisation')
  const organisation = await insertOrganisation(
    deps.db,
    newOrganisation({ ...input, serviceFeeRate: parent.serviceFeeRate, taxLiability: parent.taxLiability }, deps.clock()),
  )
  deps.access.forgetSubtrees()
  return organisation
}

export async function getOrganisation(
  deps: Pick<OrganisationDeps, 'db' | 'access'>,
  principal: Principal,
  id: string,
): Promise<Organisation> {
  if (!(await deps.access.canSee(principal, id))) throw notFound('organisation')
  const organisation = await findOrganisationById(deps.db, id)
  if (!organisation) throw notFound('organisation')
  return organisation
}
