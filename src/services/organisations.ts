// Organisations: created by operators (CLI, with a first API key) or as children through the API.
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { AddressJson, BillingJson, Database } from '../db/database.js'
import {
  findEffectiveAllowedOrigins,
  findOrganisationById,
  findOrganisationChain,
  findOrganisationWithChain,
  insertOrganisation,
  updateAllowedOrigins,
  updateProfitShareSettings,
  type ChainOrganisation,
  type Organisation,
  type TaxLiability,
} from '../db/repositories/organisations.js'
import { isKnownCountry, subdivisionForTax } from '../domain/countries.js'
import {
  DEFAULT_SETTLEMENT_MODEL,
  parseRelativeProfitShare,
  proportionalProfitShares,
  type SettlementModel,
} from '../domain/profit-share.js'
import { DomainError } from '../domain/errors.js'
import { isPricedCurrency } from '../domain/fx.js'
import type { FxTable } from '../domain/types.js'
import { AppError, notFound } from '../errors.js'
import type { AccessResolver, Principal } from './access.js'
import { createApiKey, type KeyMode } from './api-keys.js'
import { loadFxInUse } from './fx.js'
import type { ReferenceDataCache } from './reference-data.js'
import { newId } from '../ids.js'
import type { SessionOrigins } from './session-origins.js'

export type { Organisation, TaxLiability }

export interface OrganisationDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
  /** The exchange rates in use decide which currencies an organisation may have; told when profit shares change. */
  readonly reference: Pick<ReferenceDataCache, 'fxInUse' | 'forgetProfitShareChains'>
  readonly clock: Clock
  /** Told when allowed origins change, so that this process's CORS answers follow at once. */
  readonly sessionOrigins: Pick<SessionOrigins, 'forget'>
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
  /** Web origins allowed to read the organisation's sessions in a browser; null or absent = inherit. */
  allowedOrigins?: readonly string[] | null | undefined
  /** Its share of what its parent receives of a service fee, 0–1 (default 0). */
  relativeProfitShare?: number | string | undefined
  billing?: BillingInput | null | undefined
  /** Operator only, roots only. */
  settlementModel?: SettlementModel | undefined
}

/** Billing details as a request gives them: the country (alpha-3) defaults to the organisation's address. */
export interface BillingInput {
  currencyCode: string
  email?: string | null | undefined
  taxNumber?: string | null | undefined
  companyRegistrationNumber?: string | null | undefined
  countryCode?: string | undefined
  state?: string | null | undefined
}

/** An organisation with what its tree decides for it: its proportional profit share and its settlement model. */
export interface OrganisationView extends Organisation {
  /** Exact decimal string: the product of the relative shares from the root down to it. */
  proportionalProfitShare: string
  /** Its root's (the default when the root has none). */
  effectiveSettlementModel: SettlementModel
}

export const MAX_ALLOWED_ORIGINS = 20

const ORIGIN_SHAPE = /^https?:\/\/[^/?#@*\\\s]+$/i

/**
 * One web origin as browsers send it in the Origin header: http(s)://host[:port], lower-case scheme and host
 * (international names in punycode), no default port. Anything else (a path, even "/", a query, a fragment,
 * user info, a wildcard, another scheme, "null") is refused: undefined.
 */
export function normaliseOrigin(value: string): string | undefined {
  if (value.length > 300 || !ORIGIN_SHAPE.test(value)) return undefined
  try {
    const url = new URL(value)
    // The shape check leaves nothing for these to hold, but an origin must never carry them.
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined
    return url.origin
  } catch {
    return undefined
  }
}

/** The normalised, de-duplicated list (first occurrence kept), or AppError naming every bad entry. */
export function normaliseAllowedOrigins(values: readonly string[], path = '/allowedOrigins'): string[] {
  const bad: { path: string; message: string }[] = []
  const origins: string[] = []
  values.forEach((value, i) => {
    const origin = normaliseOrigin(value)
    if (origin === undefined) {
      bad.push({
        path: `${path}/${i}`,
        message:
          value === 'null'
            ? 'must not be null: the null origin is never allowed'
            : 'must be an origin: http(s)://host[:port], with no path, query, fragment, user info or wildcard',
      })
    } else if (!origins.includes(origin)) {
      origins.push(origin)
    }
  })
  const first = bad[0]
  if (first) throw new AppError('INVALID_ALLOWED_ORIGIN', `${first.path.slice(1).replaceAll('/', '.')} ${first.message}`, bad)
  if (origins.length > MAX_ALLOWED_ORIGINS) {
    throw new AppError('TOO_MANY_ALLOWED_ORIGINS', `an organisation may allow at most ${MAX_ALLOWED_ORIGINS} origins`, [
      { path, message: `must have at most ${MAX_ALLOWED_ORIGINS} origins` },
    ])
  }
  return origins
}

const SERVICE_FEE_PATTERN = /^(0(\.\d{1,6})?|1(\.0{1,6})?)$/

/** Billing details checked and normalised: a currency Canopy can price, a known country, a US/CA state it recognises. */
export function normaliseBilling(billing: BillingInput, address: AddressJson, fx: FxTable): BillingJson {
  if (!isPricedCurrency(billing.currencyCode, fx)) {
    throw new DomainError(
      'UNSUPPORTED_BILLING_CURRENCY',
      `billing currency ${billing.currencyCode} is not one canopy can price`,
      '/billing/currencyCode',
    )
  }
  const countryCode = billing.countryCode ?? address.countryCode
  if (!isKnownCountry(countryCode)) {
    throw new DomainError('UNKNOWN_COUNTRY', `country code ${countryCode} is not an iso 3166-1 alpha-3 country`, '/billing/countryCode')
  }
  return {
    currencyCode: billing.currencyCode,
    email: billing.email ?? null,
    taxNumber: billing.taxNumber ?? null,
    companyRegistrationNumber: billing.companyRegistrationNumber ?? null,
    countryCode,
    state: subdivisionForTax(countryCode, billing.state, '/billing/state'),
  }
}

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

const newOrganisation = (input: OrganisationInput, now: Date, fx: FxTable): Organisation => ({
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
  relativeProfitShare: input.relativeProfitShare === undefined ? '0' : parseRelativeProfitShare(input.relativeProfitShare),
  billing: input.billing == null ? null : normaliseBilling(input.billing, input.address, fx),
  settlementModel: input.settlementModel ?? null,
  status: 'active',
  createdAt: now,
  allowedOrigins: input.allowedOrigins == null ? null : normaliseAllowedOrigins(input.allowedOrigins),
})

/** What the tree decides for an organisation, from its chain (root first, the organisation last). */
export function viewOf(organisation: Organisation, chain: readonly ChainOrganisation[]): OrganisationView {
  const shares = proportionalProfitShares(chain.map((link) => link.relativeProfitShare))
  return {
    ...organisation,
    proportionalProfitShare: shares.at(-1) ?? '0',
    effectiveSettlementModel: chain[0]?.settlementModel ?? DEFAULT_SETTLEMENT_MODEL,
  }
}

/** The organisation with its proportional share and settlement model (one read of its chain). */
export async function organisationView(db: Kysely<Database>, organisation: Organisation): Promise<OrganisationView> {
  return viewOf(organisation, await findOrganisationChain(db, organisation.id))
}

/** Operator path (CLI, demo bootstrap): an organisation, optionally under a parent, with its first API key. */
export async function createOrganisationWithKey(
  db: Kysely<Database>,
  input: OrganisationInput,
  mode: KeyMode,
  now: Date,
): Promise<{ organisation: OrganisationView; apiKey: string; apiKeyPrefix: string }> {
  const fx = (await loadFxInUse(db)).table
  validate(input, fx)
  if (input.settlementModel !== undefined && input.parentId !== null) throw settlementModelOnChild()
  const draft = newOrganisation(input, now, fx)
  return db.transaction().execute(async (trx) => {
    if (input.parentId && !(await findOrganisationById(trx, input.parentId))) throw notFound('parent organisation')
    const organisation = await organisationView(trx, await insertOrganisation(trx, draft))
    const issued = await createApiKey(trx, organisation.id, mode, now)
    return { organisation, apiKey: issued.apiKey, apiKeyPrefix: issued.key.prefix }
  })
}

const settlementModelOnChild = (): AppError =>
  new AppError('SETTLEMENT_MODEL_ROOT_ONLY', 'a settlement model is set on a root organisation and inherited by its descendants', [
    { path: '/settlementModel', message: 'can only be set on an organisation without a parent' },
  ])

/**
 * API path: a child of an organisation the caller may act on. Pricing settings (service fee, tax liability)
 * are inherited from the parent and only an operator can change them.
 */
export async function createChildOrganisation(
  deps: OrganisationDeps,
  principal: Principal,
  input: Omit<OrganisationInput, 'serviceFeeRate' | 'taxLiability' | 'settlementModel'> & { parentId: string },
): Promise<OrganisationView> {
  await deps.access.assertCanActOn(principal, input.parentId, '/parentOrganisationId')
  const fx = (await deps.reference.fxInUse()).table
  validate(input, fx)
  const parent = await findOrganisationById(deps.db, input.parentId)
  if (!parent) throw notFound('parent organisation')
  // The caller acts for the parent's tree, so it may give the child a share of what the parent receives.
  const organisation = await insertOrganisation(
    deps.db,
    newOrganisation({ ...input, serviceFeeRate: parent.serviceFeeRate, taxLiability: parent.taxLiability }, deps.clock(), fx),
  )
  deps.access.forgetSubtrees()
  return organisationView(deps.db, organisation)
}

export async function getOrganisation(
  deps: Pick<OrganisationDeps, 'db' | 'access'>,
  principal: Principal,
  id: string,
): Promise<OrganisationView> {
  if (!(await deps.access.canSee(principal, id))) throw notFound('organisation')
  const found = await findOrganisationWithChain(deps.db, id)
  if (!found) throw notFound('organisation')
  return viewOf(found.organisation, found.chain)
}

/** An organisation's own allowed origins and the ones in force for it (its own, else its nearest ancestor's). */
export interface AllowedOrigins {
  organisation: OrganisationView
  effectiveAllowedOrigins: string[]
}

/** Operator path (CLI): sets an organisation's allowed origins; null makes it inherit again, [] allows none. */
export async function setAllowedOrigins(
  db: Kysely<Database>,
  input: { organisationId: string; allowedOrigins: readonly string[] | null },
  _now: Date,
): Promise<AllowedOrigins> {
  const origins = input.allowedOrigins === null ? null : normaliseAllowedOrigins(input.allowedOrigins)
  const organisation = await updateAllowedOrigins(db, input.organisationId, origins)
  if (!organisation) throw notFound('organisation')
  return {
    organisation: await organisationView(db, organisation),
    effectiveAllowedOrigins: await findEffectiveAllowedOrigins(db, { organisationId: organisation.id }),
  }
}

/** What a PATCH may change (each optional; at least one, by the schema). */
export interface OrganisationUpdate {
  allowedOrigins?: readonly string[] | null | undefined
  relativeProfitShare?: number | undefined
  billing?: BillingInput | null | undefined
}

/**
 * API path: PATCH of an organisation of the caller's tree: its allowed origins and billing details, and — for a
 * descendant of the caller's organisation only, as the parent's tree decides what it passes on — its relative profit
 * share. Pricing settings are an operator's, and the identity fields (names, address, MCC) are fixed once created.
 * Everything is checked before anything is written, and written in one transaction.
 */
export async function updateOrganisation(
  deps: OrganisationDeps,
  principal: Principal,
  id: string,
  input: OrganisationUpdate,
): Promise<OrganisationView> {
  if (!(await deps.access.canSee(principal, id))) throw notFound('organisation')
  if (input.relativeProfitShare !== undefined && id === principal.organisationId) {
    throw new AppError(
      'PROFIT_SHARE_SET_BY_PARENT',
      "an organisation's relativeProfitShare is set by its parent's tree, not by its own api key",
      [{ path: '/relativeProfitShare', message: "can be set with an api key of the parent's tree (a root's by the operator)" }],
    )
  }
  const current = await findOrganisationById(deps.db, id)
  if (!current) throw notFound('organisation')
  const origins =
    input.allowedOrigins === undefined ? undefined : input.allowedOrigins === null ? null : normaliseAllowedOrigins(input.allowedOrigins)
  const relativeProfitShare = input.relativeProfitShare === undefined ? undefined : parseRelativeProfitShare(input.relativeProfitShare)
  const billing =
    input.billing === undefined
      ? undefined
      : input.billing === null
        ? null
        : normaliseBilling(input.billing, current.address, (await deps.reference.fxInUse()).table)
  const organisation = await deps.db.transaction().execute(async (trx) => {
    let updated: Organisation | undefined = current
    if (origins !== undefined) updated = await updateAllowedOrigins(trx, id, origins)
    if (relativeProfitShare !== undefined || billing !== undefined) {
      updated = await updateProfitShareSettings(trx, id, {
        ...(relativeProfitShare === undefined ? {} : { relativeProfitShare }),
        ...(billing === undefined ? {} : { billing }),
      })
    }
    return updated
  })
  if (!organisation) throw notFound('organisation')
  if (origins !== undefined) deps.sessionOrigins.forget()
  if (relativeProfitShare !== undefined || billing !== undefined) deps.reference.forgetProfitShareChains()
  return organisationView(deps.db, organisation)
}

/**
 * Operator path (CLI): an organisation's profit-share settings — any organisation's relative share (a root's can
 * only be set here), billing details, and a root's settlement model (null: the default again).
 */
export async function setProfitShareSettings(
  db: Kysely<Database>,
  input: {
    organisationId: string
    relativeProfitShare?: string | undefined
    billing?: BillingInput | null | undefined
    settlementModel?: SettlementModel | null | undefined
  },
): Promise<OrganisationView> {
  const current = await findOrganisationById(db, input.organisationId)
  if (!current) throw notFound('organisation')
  if (input.settlementModel != null && current.parentId !== null) throw settlementModelOnChild()
  const relativeProfitShare = input.relativeProfitShare === undefined ? undefined : parseRelativeProfitShare(input.relativeProfitShare)
  const billing =
    input.billing === undefined
      ? undefined
      : input.billing === null
        ? null
        : normaliseBilling(input.billing, current.address, (await loadFxInUse(db)).table)
  const organisation = await updateProfitShareSettings(db, current.id, {
    ...(relativeProfitShare === undefined ? {} : { relativeProfitShare }),
    ...(billing === undefined ? {} : { billing }),
    ...(input.settlementModel === undefined ? {} : { settlementModel: input.settlementModel }),
  })
  if (!organisation) throw notFound('organisation')
  return organisationView(db, organisation)
}
