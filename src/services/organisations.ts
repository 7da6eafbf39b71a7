// Organisations: created by operators (CLI, with a first API key) or as children through the API.
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { AddressJson, BillingJson, Database } from '../db/database.js'
import {
  findEffectiveAllowedOrigins,
  findOrganisationById,
  findOrganisationChain,
  findOrganisationWithChain,
  findSubtreeOrganisations,
  insertOrganisation,
  updateOrganisationSettings,
  updateOrganisationStatus,
  type ChainOrganisation,
  type Organisation,
  type OrganisationSettingsChange,
  type TaxLiability,
} from '../db/repositories/organisations.js'
import { changedFields } from '../domain/audit.js'
import { normaliseIpAllowlist, type IpAllowlist } from '../domain/ip-allowlist.js'
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
import { principalMay, type AccessResolver, type Principal } from './access.js'
import { recordAudit } from './audit.js'
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

/** The normalised list, or INVALID_IP_ALLOWLIST_ENTRY naming every bad entry. */
export function normaliseIpAllowlistInput(input: IpAllowlist, path = '/ipAllowlist'): IpAllowlist {
  const result = normaliseIpAllowlist(input)
  if ('allowlist' in result) return result.allowlist
  const details = result.errors.map((e) => ({ path: `${path}/entries/${e.index}`, message: e.message }))
  const first = details[0]
  throw new AppError('INVALID_IP_ALLOWLIST_ENTRY', `${first?.path.slice(1).replaceAll('/', '.')} ${first?.message}`, details)
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
  /** Addresses its API keys may call from; null or absent = inherit. */
  ipAllowlist?: IpAllowlist | null | undefined
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
  ipAllowlist: input.ipAllowlist == null ? null : normaliseIpAllowlistInput(input.ipAllowlist),
  requireTotp: false,
})

/** What the tree decides for an organisation, from its chain (root first, the organisation last). */
export function viewOf(
  organisation: Organisation,
  chain: readonly Pick<ChainOrganisation, 'relativeProfitShare' | 'settlementModel'>[],
): OrganisationView {
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
  const now = deps.clock()
  const organisation = await deps.db.transaction().execute(async (trx) => {
    // The caller acts for the parent's tree, so it may give the child a share of what the parent receives.
    const created = await insertOrganisation(
      trx,
      newOrganisation({ ...input, serviceFeeRate: parent.serviceFeeRate, taxLiability: parent.taxLiability }, now, fx),
    )
    const { tradingName, legalName, parentId, currencyCode, allowedOrigins, ipAllowlist, relativeProfitShare, billing } = created
    await recordAudit(
      trx,
      principal,
      [
        {
          type: 'organisation.created',
          organisationId: created.id,
          changes: { tradingName, legalName, parentId, currencyCode, allowedOrigins, ipAllowlist, relativeProfitShare, billing },
        },
      ],
      now,
    )
    return created
  })
  deps.access.forgetSubtrees()
  return organisationView(deps.db, organisation)
}

/** The caller's organisation and all its descendants, deactivated ones included, parents before children. */
export async function listOrganisationTree(
  deps: Pick<OrganisationDeps, 'db'>,
  principal: Principal,
): Promise<(OrganisationView & { depth: number })[]> {
  const [above, subtree] = await Promise.all([
    findOrganisationChain(deps.db, principal.organisationId),
    findSubtreeOrganisations(deps.db, principal.organisationId),
  ])
  // Parents come before their children, so each chain is its parent's plus itself (the caller's comes from above).
  const chains = new Map<string, readonly Pick<ChainOrganisation, 'relativeProfitShare' | 'settlementModel'>[]>()
  return subtree.map((organisation) => {
    const parentChain = organisation.parentId === null ? undefined : chains.get(organisation.parentId)
    const chain = parentChain ? [...parentChain, organisation] : above
    chains.set(organisation.id, chain)
    return { ...viewOf(organisation, chain), depth: organisation.depth }
  })
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
  const organisation = await updateOrganisationSettings(db, input.organisationId, { allowedOrigins: origins })
  if (!organisation) throw notFound('organisation')
  return {
    organisation: await organisationView(db, organisation),
    effectiveAllowedOrigins: await findEffectiveAllowedOrigins(db, { organisationId: organisation.id }),
  }
}

/** What a PATCH may change (each optional; at least one, by the schema). */

export interface OrganisationUpdate {
  allowedOrigins?: readonly string[] | null | undefined
  ipAllowlist?: IpAllowlist | null | undefined
  requireSecondFactor?: boolean | undefined
  relativeProfitShare?: number | undefined
  billing?: BillingInput | null | undefined
}

/**
 * API path: PATCH of an organisation of the caller's tree: its allowed origins, its IP allowlist, (an admin's or an
 * API key's) whether its Hub users must use a second factor and its billing details, and — for a descendant of the
 * caller's organisation only, as the parent's tree decides what it passes on — its relative profit share. Pricing
 * settings are an operator's, and the identity fields (names, address, MCC) are fixed once created. Everything is
 * checked before anything is written, and written in one statement with its audit event.
 */
export async function updateOrganisation(
  deps: OrganisationDeps,
  principal: Principal,
  id: string,
  input: OrganisationUpdate,
): Promise<OrganisationView> {
  if (!(await deps.access.canSee(principal, id))) throw notFound('organisation')
  if (input.requireSecondFactor !== undefined && !principalMay(principal, 'organisations:manage')) {
    throw new AppError('PERMISSION_DENIED', 'only an admin may require a second factor', [
      { path: '/requireSecondFactor', message: 'needs the admin role' },
    ])
  }
  for (const field of ['relativeProfitShare', 'billing'] as const) {
    if (input[field] !== undefined && !principalMay(principal, 'organisations:manage')) {
      throw new AppError('PERMISSION_DENIED', `only an admin may change ${field}`, [{ path: `/${field}`, message: 'needs the admin role' }])
    }
  }
  if (input.relativeProfitShare !== undefined && id === principal.organisationId) {
    throw new AppError(
      'PROFIT_SHARE_SET_BY_PARENT',
      "an organisation's relativeProfitShare is set by its parent's tree, not by its own api key",
      [{ path: '/relativeProfitShare', message: "can be set with an api key of the parent's tree (a root's by the operator)" }],
    )
  }
  const current = await findOrganisationById(deps.db, id)
  if (!current) throw notFound('organisation')
  const change: OrganisationSettingsChange = {
    ...(input.allowedOrigins === undefined
      ? {}
      : { allowedOrigins: input.allowedOrigins === null ? null : normaliseAllowedOrigins(input.allowedOrigins) }),
    ...(input.ipAllowlist === undefined
      ? {}
      : { ipAllowlist: input.ipAllowlist === null ? null : normaliseIpAllowlistInput(input.ipAllowlist) }),
    ...(input.requireSecondFactor === undefined ? {} : { requireTotp: input.requireSecondFactor }),
    ...(input.relativeProfitShare === undefined ? {} : { relativeProfitShare: parseRelativeProfitShare(input.relativeProfitShare) }),
    ...(input.billing === undefined
      ? {}
      : {
          billing: input.billing === null ? null : normaliseBilling(input.billing, current.address, (await deps.reference.fxInUse()).table),
        }),
  }
  const now = deps.clock()
  const organisation = await deps.db.transaction().execute(async (trx) => {
    const before = await findOrganisationById(trx, id)
    const after = before && (await updateOrganisationSettings(trx, id, change))
    if (!before || !after) throw notFound('organisation')
    const changes = changedFields(before, after, ['allowedOrigins', 'ipAllowlist', 'requireTotp', 'relativeProfitShare', 'billing'])
    if (Object.keys(changes).length > 0)
      await recordAudit(trx, principal, [{ type: 'organisation.updated', organisationId: id, changes }], now)
    return after
  })
  deps.sessionOrigins.forget()
  deps.access.forgetIpAllowlists()
  if (change.relativeProfitShare !== undefined || change.billing !== undefined) deps.reference.forgetProfitShareChains()
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
  const organisation = await updateOrganisationSettings(db, current.id, {
    ...(relativeProfitShare === undefined ? {} : { relativeProfitShare }),
    ...(billing === undefined ? {} : { billing }),
    ...(input.settlementModel === undefined ? {} : { settlementModel: input.settlementModel }),
  })
  if (!organisation) throw notFound('organisation')
  return organisationView(db, organisation)
}

/**
 * Deactivates or reactivates a descendant of the caller's organisation (never its own: OWN_ORGANISATION). A
 * deactivated organisation's subtree stops at once in this process (its keys, its users' sessions), in others within
 * AUTH_CACHE_TTL_MS; reactivating brings it back as it was. Asking for the status it already has changes nothing.
 */
export async function setOrganisationActive(
  deps: Pick<OrganisationDeps, 'db' | 'access' | 'clock'>,
  principal: Principal,
  id: string,
  active: boolean,
): Promise<OrganisationView> {
  if (id === principal.organisationId) {
    throw new AppError('OWN_ORGANISATION', `an organisation cannot ${active ? 'reactivate' : 'deactivate'} itself`, [
      { path: '/id', message: "is the caller's own organisation" },
    ])
  }
  if (!(await deps.access.canManage(principal, id))) throw notFound('organisation')
  const status = active ? 'active' : 'inactive'
  const now = deps.clock()
  const organisation = await deps.db.transaction().execute(async (trx) => {
    const before = await findOrganisationById(trx, id)
    if (!before) throw notFound('organisation')
    if (before.status === status) return before
    const after = await updateOrganisationStatus(trx, id, status)
    if (!after) throw notFound('organisation')
    await recordAudit(
      trx,
      principal,
      [
        {
          type: active ? 'organisation.reactivated' : 'organisation.deactivated',
          organisationId: id,
          changes: { status: { from: before.status, to: status } },
        },
      ],
      now,
    )
    return after
  })
  deps.access.forgetSubtrees()
  deps.access.forgetKeys()
  return organisationView(deps.db, organisation)
}
