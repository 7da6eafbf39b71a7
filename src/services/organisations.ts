// Organisations: created by operators (CLI, with a first API key) or as children through the API.
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { AddressJson, Database } from '../db/database.js'
import {
  findEffectiveAllowedOrigins,
  findOrganisationById,
  findSubtreeOrganisations,
  insertOrganisation,
  updateAllowedOrigins,
  updateOrganisationSettings,
  updateOrganisationStatus,
  type Organisation,
  type OrganisationSettingsChange,
  type TaxLiability,
} from '../db/repositories/organisations.js'
import { changedFields } from '../domain/audit.js'
import { normaliseIpAllowlist, type IpAllowlist } from '../domain/ip-allowlist.js'
import { isKnownCountry } from '../domain/countries.js'
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
  /** The exchange rates in use decide which currencies an organisation may have. */
  readonly reference: Pick<ReferenceDataCache, 'fxInUse'>
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
  allowedOrigins: input.allowedOrigins == null ? null : normaliseAllowedOrigins(input.allowedOrigins),
  ipAllowlist: input.ipAllowlist == null ? null : normaliseIpAllowlistInput(input.ipAllowlist),
  requireTotp: false,
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
    const issued = await createApiKey(trx, organisation.id, mode, now)
    return { organisation, apiKey: issued.apiKey, apiKeyPrefix: issued.key.prefix }
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
  const now = deps.clock()
  const organisation = await deps.db.transaction().execute(async (trx) => {
    const created = await insertOrganisation(
      trx,
      newOrganisation({ ...input, serviceFeeRate: parent.serviceFeeRate, taxLiability: parent.taxLiability }, now),
    )
    const { tradingName, legalName, parentId, currencyCode, allowedOrigins, ipAllowlist } = created
    await recordAudit(
      trx,
      principal,
      [
        {
          type: 'organisation.created',
          organisationId: created.id,
          changes: { tradingName, legalName, parentId, currencyCode, allowedOrigins, ipAllowlist },
        },
      ],
      now,
    )
    return created
  })
  deps.access.forgetSubtrees()
  return organisation
}

/** The caller's organisation and all its descendants, deactivated ones included, parents before children. */
export async function listOrganisationTree(
  deps: Pick<OrganisationDeps, 'db'>,
  principal: Principal,
): Promise<(Organisation & { depth: number })[]> {
  return findSubtreeOrganisations(deps.db, principal.organisationId)
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

/** An organisation's own allowed origins and the ones in force for it (its own, else its nearest ancestor's). */
export interface AllowedOrigins {
  organisation: Organisation
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
  return { organisation, effectiveAllowedOrigins: await findEffectiveAllowedOrigins(db, { organisationId: organisation.id }) }
}

export interface OrganisationUpdate {
  allowedOrigins?: readonly string[] | null | undefined
  ipAllowlist?: IpAllowlist | null | undefined
  requireSecondFactor?: boolean | undefined
}

/**
 * API path: PATCH of an organisation of the caller's tree: its allowed origins, its IP allowlist and (an admin's or
 * an API key's) whether its Hub users must use a second factor. Pricing settings are an operator's, and the
 * identity fields (names, address, MCC) are fixed once created. Audited with what changed.
 */
export async function updateOrganisation(
  deps: OrganisationDeps,
  principal: Principal,
  id: string,
  input: OrganisationUpdate,
): Promise<Organisation> {
  if (!(await deps.access.canSee(principal, id))) throw notFound('organisation')
  if (input.requireSecondFactor !== undefined && !principalMay(principal, 'organisations:manage')) {
    throw new AppError('PERMISSION_DENIED', 'only an admin may require a second factor', [
      { path: '/requireSecondFactor', message: 'needs the admin role' },
    ])
  }
  const change: OrganisationSettingsChange = {
    ...(input.allowedOrigins === undefined
      ? {}
      : { allowedOrigins: input.allowedOrigins === null ? null : normaliseAllowedOrigins(input.allowedOrigins) }),
    ...(input.ipAllowlist === undefined
      ? {}
      : { ipAllowlist: input.ipAllowlist === null ? null : normaliseIpAllowlistInput(input.ipAllowlist) }),
    ...(input.requireSecondFactor === undefined ? {} : { requireTotp: input.requireSecondFactor }),
  }
  const now = deps.clock()
  const organisation = await deps.db.transaction().execute(async (trx) => {
    const before = await findOrganisationById(trx, id)
    const after = before && (await updateOrganisationSettings(trx, id, change))
    if (!before || !after) throw notFound('organisation')
    const changes = changedFields(before, after, ['allowedOrigins', 'ipAllowlist', 'requireTotp'])
    if (Object.keys(changes).length > 0)
      await recordAudit(trx, principal, [{ type: 'organisation.updated', organisationId: id, changes }], now)
    return after
  })
  deps.sessionOrigins.forget()
  deps.access.forgetIpAllowlists()
  return organisation
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
): Promise<Organisation> {
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
  return organisation
}
