// Operator CLI: `npm run cli -- <command>`. Prints JSON on stdout; usage errors exit 2, failures exit 1.
import { readFileSync } from 'node:fs'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import type { Kysely } from 'kysely'
import { ConfigError, loadConfig, loadDotEnvFile, publicBaseUrl, summaryRollupDelayMs, type Config } from '../config.js'
import { isRole } from '../domain/permissions.js'
import { createUserAsOperator } from '../services/hub/users.js'
import { DataDirLockedError, openConfiguredDatabase } from '../db/connect.js'
import type { Database } from '../db/database.js'
import { PendingMigrationsError, prepareSchema } from '../db/migrate.js'
import { DomainError } from '../domain/errors.js'
import { AppError } from '../errors.js'
import {
  createApiKey,
  DEFAULT_EXPIRE_OLD_IN_SECONDS,
  listApiKeys,
  MAX_EXPIRE_OLD_IN_SECONDS,
  revokeApiKey,
  rotateApiKeyAsOperator,
  API_KEY_PREFIX_PATTERN,
  type KeyMode,
} from '../services/api-keys.js'
import { demoCatalogue, importCatalogue, importEmissionFactors, ImportError } from '../services/catalogue.js'
import { importFxRates } from '../services/fx.js'
import {
  createOrganisationWithKey,
  normaliseAllowedOrigins,
  setAllowedOrigins,
  setProfitShareSettings,
  type BillingInput,
  type OrganisationView,
  type TaxLiability,
} from '../services/organisations.js'
import { SETTLEMENT_MODELS, type SettlementModel } from '../domain/profit-share.js'
import { presentApiKey, presentIssuedKey, presentRotatedKey } from '../http/presenters/api-keys.js'
import { presentOrganisation } from '../http/presenters/organisations.js'
import { presentWebhookEndpoint } from '../http/presenters/webhook-endpoints.js'
import { EVENT_TYPES, WEBHOOK_FORMATS, type WebhookFormat } from '../domain/webhooks.js'
import { AddressPolicy } from '../services/webhooks/address-policy.js'
import { createEndpointAsOperator, deleteEndpointAsOperator, listEndpointsAsOperator } from '../services/webhooks/endpoints.js'
import { csvChunks } from '../http/presenters/reconciliation-csv.js'
import { AccessResolver } from '../services/access.js'
import { exportImpactRecordsAsOperator } from '../services/reconciliation.js'
import { rebuildRollups, rollupStatus, verifyRollups } from '../services/summary-rollups.js'
import { maintainPartitions, partitionListing } from '../services/partitions.js'
import { systemClock } from '../clock.js'
import { profitShareCsvChunks } from '../http/presenters/profit-share-csv.js'
import { exportProfitShareRecordsAsOperator } from '../services/profit-share.js'

export const USAGE = `Usage: npm run cli -- <command> [options]

  org create --name <s> --country <alpha3> --currency <iso4217>
             [--mcc <4 digits>] [--parent <uuid>] [--service-fee <rate 0..1>]
             [--tax-liability platform|organisation] [--legal-name <s>] [--reference <s>]
             [--address-line1 <s>] [--city <s>] [--postal-code <s>] [--state <s>] [--mode live|test]
             [--relative-profit-share <0..1>] [--settlement-model net|gross|invoice (a root only)]
             [--billing-currency <iso4217> [--billing-email <s>] [--billing-tax-number <s>]
              [--billing-company-number <s>] [--billing-country <alpha3>] [--billing-state <s>]]
  org update <organisationId> [--allowed-origin <origin> [--allowed-origin <origin> …]
             | --clear-allowed-origins | --inherit-allowed-origins]
             [--relative-profit-share <0..1>] [--settlement-model net|gross|invoice|default]
             [--billing-currency <iso4217> [--billing-… as for create] | --clear-billing]
             allowed origins: the web origins (scheme://host[:port]) whose pages may read the organisation's
             sessions with the browser SDK; clear: none; inherit: the nearest ancestor's list (the default).
             relative profit share: its share of what its parent receives of the service fee (a root's: of the
             platform's); settlement model: a root's, inherited by its tree (default: gross)
  key create --org <uuid> [--mode live|test]
  key list --org <uuid>
  key revoke --key-prefix <prefix>
  key rotate <key id | prefix> [--expire-old-in <seconds>]
                                            a new key (shown once); the old one works until its expiry:
                                            0 (now) to 2592000 (30 days), default 86400 (24 h)
  catalogue import <file.json> | --demo     impact partners, projects, organisation partner lists (upsert)
  factors import <file.csv>                 emission factors (upsert; they take precedence over the defaults)
  webhooks create --organisation <uuid> --url <https url> [--events <type,type|*>] [--format standard|ekko]
                  [--description <s>]       a webhook endpoint; its signing secret (whsec_…) is shown once
  webhooks list --organisation <uuid>
  webhooks delete <endpoint id>
  user create --organisation <uuid> --email <address> --role admin|developer|analyst
                                            a Hub user, with a one-time set-password link (24 h) under PUBLIC_BASE_URL
  fx import <file.csv>                      ECB reference rates: eurofxref.csv or eurofxref-hist.csv (upsert by date and
                                            currency); new quotes use the latest date
  report allocations --from <iso> --to <iso> [--organisation <uuid>]
                                            the impact records of [from, to) as CSV on stdout (as the API's export):
                                            one organisation's tree, or every tree; at most 366 days
  report profit-share --from <iso> --to <iso> [--organisation <uuid>]
                                            the profit-share records of [from, to) as CSV on stdout (as the API's export,
                                            every line): one organisation's tree, or every tree; at most 366 days
  summary status                            up to when the summary rollups are complete, and their rows by grain
  summary rebuild                           every summary rollup again from the records (summaries stay exact meanwhile)
  summary verify                            compares every rolled-up UTC day with its records; exits 1 listing the days
                                            that differ (then run summary rebuild)
  partitions list                           the partitions of each partitioned table: bounds, estimated rows, bytes
  partitions maintain                       creates the months ahead and drops expired months now (as the API's job
                                            does every PARTITION_MAINTENANCE_INTERVAL_MS; docs/partitioning.md)

Runs against DATABASE_URL when set, otherwise the embedded database in DATA_DIR (default ./.data).`

class UsageError extends Error {}

/** A command's JSON output that also means the command failed (exit 1). */
class FailedOutput {
  constructor(readonly result: unknown) {}
}

/** A command's output that is text to stream to stdout as it is produced (not JSON). */
class TextOutput {
  constructor(readonly chunks: AsyncIterable<string>) {}
}

function isoDateTime(options: Options, name: string): string {
  const value = required(options, name)
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(value) || Number.isNaN(Date.parse(value))) {
    throw new UsageError(`--${name} must be an ISO 8601 date-time with a time zone, e.g. 2026-01-01T00:00:00Z`)
  }
  return value
}

/** What operators see of an organisation: what the API shows, plus the exact service fee and shares as decimal strings. */
const describeOrganisation = (org: OrganisationView) => ({
  ...presentOrganisation(org),
  serviceFeeRate: org.serviceFeeRate,
  exactProportionalProfitShare: org.proportionalProfitShare,
})

const BILLING_OPTIONS = {
  'billing-currency': { type: 'string' },
  'billing-email': { type: 'string' },
  'billing-tax-number': { type: 'string' },
  'billing-company-number': { type: 'string' },
  'billing-country': { type: 'string' },
  'billing-state': { type: 'string' },
} as const

/** --billing-… options → billing details (undefined when none is given); the service checks the values. */
function billingOptions(options: Options): BillingInput | undefined {
  const currency = optional(options, 'billing-currency')
  const others = ['billing-email', 'billing-tax-number', 'billing-company-number', 'billing-country', 'billing-state']
  if (currency === undefined) {
    if (others.some((name) => optional(options, name) !== undefined))
      throw new UsageError('--billing-currency is required with other --billing-… options')
    return undefined
  }
  if (!/^[A-Z]{3}$/i.test(currency)) throw new UsageError('--billing-currency must be an ISO 4217 code, e.g. USD')
  const country = optional(options, 'billing-country')
  if (country !== undefined && !/^[A-Z]{3}$/i.test(country))
    throw new UsageError('--billing-country must be an ISO 3166-1 alpha-3 code, e.g. USA')
  return {
    currencyCode: currency.toUpperCase(),
    email: optional(options, 'billing-email') ?? null,
    taxNumber: optional(options, 'billing-tax-number') ?? null,
    companyRegistrationNumber: optional(options, 'billing-company-number') ?? null,
    ...(country === undefined ? {} : { countryCode: country.toUpperCase() }),
    state: optional(options, 'billing-state') ?? null,
  }
}

/** --settlement-model: one of the models, or (update only) "default" to clear a root's own. */
function settlementModelOption(options: Options, allowDefault: boolean): SettlementModel | null | undefined {
  const value = optional(options, 'settlement-model')
  if (value === undefined) return undefined
  if (allowDefault && value === 'default') return null
  if (!(SETTLEMENT_MODELS as readonly string[]).includes(value)) {
    throw new UsageError(`--settlement-model must be ${SETTLEMENT_MODELS.join(', ')}${allowDefault ? ' or default' : ''}`)
  }
  return value as SettlementModel
}

/** --relative-profit-share: a number; the service checks its range and decimals (INVALID_PROFIT_SHARE). */
function relativeShareOption(options: Options): string | undefined {
  const value = optional(options, 'relative-profit-share')
  if (value !== undefined && !/^\d+(\.\d+)?$/.test(value))
    throw new UsageError('--relative-profit-share must be a number from 0 to 1, e.g. 0.2')
  return value
}

type Options = Record<string, string | boolean | (string | boolean)[] | undefined>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function required(options: Options, name: string): string {
  const value = options[name]
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`)
  return value.trim()
}

function optional(options: Options, name: string): string | undefined {
  const value = options[name]
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
}

function uuid(options: Options, name: string): string {
  const value = required(options, name)
  if (!UUID.test(value)) throw new UsageError(`--${name} must be a uuid`)
  return value.toLowerCase()
}

function mode(options: Options): KeyMode {
  const value = optional(options, 'mode') ?? 'live'
  if (value !== 'live' && value !== 'test') throw new UsageError('--mode must be live or test')
  return value
}

interface Command {
  options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>
  /** Usage checks that need no database, run before it is opened. */
  validate?(options: Options, positionals: string[]): void
  run(db: Kysely<Database>, options: Options, positionals: string[], now: Date, config: Config): Promise<unknown>
}

const str = { type: 'string' } as const

interface OrgUpdate {
  organisationId: string
  /** undefined: unchanged. */
  allowedOrigins: string[] | null | undefined
  relativeProfitShare: string | undefined
  billing: BillingInput | null | undefined
  settlementModel: SettlementModel | null | undefined
}

/** org update <id> [--allowed-origin … | --clear-allowed-origins | --inherit-allowed-origins] [profit-share options] */
function orgUpdateInput(options: Options, positionals: string[]): OrgUpdate {
  const [id, ...extra] = positionals
  if (!id || extra.length > 0) throw new UsageError('give exactly one organisation id')
  if (!UUID.test(id)) throw new UsageError('the organisation id must be a uuid')
  const origins = (options['allowed-origin'] ?? []) as string[]
  const clear = options['clear-allowed-origins'] === true
  const inherit = options['inherit-allowed-origins'] === true
  const originChoices = [origins.length > 0, clear, inherit].filter(Boolean).length
  if (originChoices > 1)
    throw new UsageError('give --allowed-origin (repeatable), or --clear-allowed-origins, or --inherit-allowed-origins')
  const billing = billingOptions(options)
  if (billing !== undefined && options['clear-billing'] === true)
    throw new UsageError('give --billing-… options or --clear-billing, not both')
  const profitShare = {
    relativeProfitShare: relativeShareOption(options),
    billing: options['clear-billing'] === true ? null : billing,
    settlementModel: settlementModelOption(options, true),
  }
  if (originChoices === 0 && Object.values(profitShare).every((value) => value === undefined)) {
    throw new UsageError('give something to change: allowed origins, --relative-profit-share, --settlement-model or billing')
  }
  const organisationId = id.toLowerCase()
  if (originChoices === 0) return { organisationId, allowedOrigins: undefined, ...profitShare }
  if (inherit) return { organisationId, allowedOrigins: null, ...profitShare }
  try {
    return { organisationId, allowedOrigins: normaliseAllowedOrigins(origins), ...profitShare }
  } catch (error) {
    const details = error instanceof AppError ? error.details.map((d) => `  ${d.path}: ${d.message}`).join('\n') : ''
    throw new UsageError(`--allowed-origin: ${(error as Error).message}${details ? `\n${details}` : ''}`)
  }
}

export const COMMANDS: Record<string, Command> = {
  'org create': {
    options: {
      name: str,
      country: str,
      currency: str,
      mcc: str,
      parent: str,
      'service-fee': str,
      'tax-liability': str,
      'legal-name': str,
      reference: str,
      'address-line1': str,
      city: str,
      'postal-code': str,
      state: str,
      mode: str,
      'relative-profit-share': str,
      'settlement-model': str,
      ...BILLING_OPTIONS,
    },
    validate(options) {
      billingOptions(options)
      settlementModelOption(options, false)
      relativeShareOption(options)
    },
    async run(db, options, _positionals, now) {
      const name = required(options, 'name')
      const country = required(options, 'country').toUpperCase()
      const currency = required(options, 'currency').toUpperCase()
      if (!/^[A-Z]{3}$/.test(country)) throw new UsageError('--country must be an ISO 3166-1 alpha-3 code, e.g. GBR')
      if (!/^[A-Z]{3}$/.test(currency)) throw new UsageError('--currency must be an ISO 4217 code, e.g. GBP')
      const mcc = optional(options, 'mcc')
      if (mcc !== undefined && !/^\d{4}$/.test(mcc)) throw new UsageError('--mcc must be 4 digits')
      const taxLiability = optional(options, 'tax-liability')
      if (taxLiability !== undefined && taxLiability !== 'platform' && taxLiability !== 'organisation') {
        throw new UsageError('--tax-liability must be platform or organisation')
      }
      const parent = optional(options, 'parent') === undefined ? null : uuid(options, 'parent')
      const state = optional(options, 'state')
      const result = await createOrganisationWithKey(
        db,
        {
          parentId: parent,
          tradingName: name,
          legalName: optional(options, 'legal-name') ?? name,
          organisationReference: optional(options, 'reference') ?? null,
          address: {
            line1: optional(options, 'address-line1') ?? '',
            city: optional(options, 'city') ?? '',
            postalCode: optional(options, 'postal-code') ?? '',
            ...(state ? { state } : {}),
            countryCode: country,
          },
          currencyCode: currency,
          mcc: mcc ?? null,
          serviceFeeRate: optional(options, 'service-fee'),
          taxLiability: taxLiability as TaxLiability | undefined,
          relativeProfitShare: relativeShareOption(options),
          billing: billingOptions(options),
          settlementModel: settlementModelOption(options, false) ?? undefined,
        },
        mode(options),
        now,
      )
      return {
        organisationId: result.organisation.id,
        apiKey: result.apiKey,
        apiKeyPrefix: result.apiKeyPrefix,
        organisation: describeOrganisation(result.organisation),
      }
    },
  },
  'org update': {
    options: {
      'allowed-origin': { type: 'string', multiple: true },
      'clear-allowed-origins': { type: 'boolean' },
      'inherit-allowed-origins': { type: 'boolean' },
      'relative-profit-share': str,
      'settlement-model': str,
      'clear-billing': { type: 'boolean' },
      ...BILLING_OPTIONS,
    },
    validate: (options, positionals) => void orgUpdateInput(options, positionals),
    async run(db, options, positionals, now) {
      const { organisationId, allowedOrigins, ...profitShare } = orgUpdateInput(options, positionals)
      let organisation: OrganisationView | undefined
      if (Object.values(profitShare).some((value) => value !== undefined)) {
        organisation = await setProfitShareSettings(db, { organisationId, ...profitShare })
      }
      if (allowedOrigins !== undefined) {
        const result = await setAllowedOrigins(db, { organisationId, allowedOrigins }, now)
        return { ...describeOrganisation(result.organisation), effectiveAllowedOrigins: result.effectiveAllowedOrigins }
      }
      return describeOrganisation(organisation as OrganisationView)
    },
  },
  'key create': {
    options: { org: str, mode: str },
    run: async (db, options, _p, now) => presentIssuedKey(await createApiKey(db, uuid(options, 'org'), mode(options), now)),
  },
  'key list': {
    options: { org: str },
    run: async (db, options) => ({ keys: (await listApiKeys(db, uuid(options, 'org'))).map(presentApiKey) }),
  },
  'key revoke': {
    options: { 'key-prefix': str },
    run: async (db, options, _p, now) => presentApiKey(await revokeApiKey(db, required(options, 'key-prefix'), now)),
  },
  'key rotate': {
    options: { 'expire-old-in': str },
    async run(db, options, positionals, now) {
      if (positionals.length !== 1) throw new UsageError('give exactly one key: its id or its prefix (ck_live_AbCd1234)')
      const key = positionals[0] ?? ''
      if (!UUID.test(key) && !API_KEY_PREFIX_PATTERN.test(key)) throw new UsageError('the key must be a key id (uuid) or a key prefix')
      const text = optional(options, 'expire-old-in') ?? String(DEFAULT_EXPIRE_OLD_IN_SECONDS)
      const seconds = /^\d{1,8}$/.test(text) ? Number(text) : NaN
      if (!(seconds >= 0 && seconds <= MAX_EXPIRE_OLD_IN_SECONDS)) {
        throw new UsageError(`--expire-old-in must be a whole number of seconds from 0 to ${MAX_EXPIRE_OLD_IN_SECONDS} (30 days)`)
      }
      return presentRotatedKey(
        await rotateApiKeyAsOperator(db, { key: UUID.test(key) ? key.toLowerCase() : key, expireOldInSeconds: seconds }, now),
      )
    },
  },
  'catalogue import': {
    options: { demo: { type: 'boolean' } },
    async run(db, options, positionals, now) {
      if (options.demo === true && positionals.length === 0) return importCatalogue(db, demoCatalogue(), now)
      if (options.demo === true || positionals.length !== 1) throw new UsageError('give exactly one catalogue file, or --demo')
      return importCatalogue(db, readJson(positionals[0] ?? ''), now)
    },
  },
  'factors import': {
    options: {},
    async run(db, _options, positionals, now) {
      if (positionals.length !== 1) throw new UsageError('give exactly one CSV file')
      return importEmissionFactors(db, readText(positionals[0] ?? ''), now)
    },
  },
  'webhooks create': {
    options: { organisation: str, url: str, events: str, format: str, description: str },
    async run(db, options, _p, now, config) {
      const format = optional(options, 'format') ?? 'standard'
      if (!(WEBHOOK_FORMATS as readonly string[]).includes(format)) throw new UsageError('--format must be standard or ekko')
      const events = (optional(options, 'events') ?? '*').split(',').map((e) => e.trim())
      const unknown = events.filter((e) => e !== '*' && !(EVENT_TYPES as readonly string[]).includes(e))
      if (unknown.length > 0)
        throw new UsageError(`--events: unknown event type ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')}, *)`)
      const { endpoint, secret } = await createEndpointAsOperator(
        db,
        {
          organisationId: uuid(options, 'organisation'),
          url: required(options, 'url'),
          enabledEvents: events,
          format: format as WebhookFormat,
          description: optional(options, 'description'),
        },
        { policy: new AddressPolicy(config.WEBHOOK_ALLOWED_CIDRS), allowHttp: config.WEBHOOK_ALLOW_HTTP },
        now,
      )
      return { ...presentWebhookEndpoint(endpoint), secret }
    },
  },
  'webhooks list': {
    options: { organisation: str },
    run: async (db, options) => ({ data: (await listEndpointsAsOperator(db, uuid(options, 'organisation'))).map(presentWebhookEndpoint) }),
  },
  'webhooks delete': {
    options: {},
    async run(db, _options, positionals) {
      const id = positionals[0] ?? ''
      if (positionals.length !== 1 || !UUID.test(id)) throw new UsageError('give exactly one webhook endpoint id')
      return { deleted: presentWebhookEndpoint(await deleteEndpointAsOperator(db, id.toLowerCase())) }
    },
  },
  'report allocations': {
    options: { from: str, to: str, organisation: str },
    validate(options) {
      isoDateTime(options, 'from')
      isoDateTime(options, 'to')
      if (optional(options, 'organisation') !== undefined) uuid(options, 'organisation')
    },
    async run(db, options) {
      const access = new AccessResolver(db, 10_000)
      // Only reads: to export from a replica, run it with DATABASE_URL set to the replica's URL.
      const records = await exportImpactRecordsAsOperator(
        { db, reads: db, access },
        {
          dateTimeFrom: isoDateTime(options, 'from'),
          dateTimeTo: isoDateTime(options, 'to'),
          organisationId: optional(options, 'organisation') === undefined ? undefined : uuid(options, 'organisation'),
        },
      )
      return new TextOutput(csvChunks(records))
    },
  },
  'summary status': {
    options: {},
    run: (db) => rollupStatus({ db, clock: systemClock }),
  },
  'summary rebuild': {
    options: {},
    async run(db, _options, _positionals, _now, config) {
      const progress = await rebuildRollups({ db, clock: systemClock, delayMs: summaryRollupDelayMs(config) })
      return { ...progress, rolledUntil: progress.rolledUntil?.toISOString() ?? null }
    },
  },
  'summary verify': {
    options: {},
    async run(db) {
      const result = await verifyRollups(db)
      const report = { ok: result.mismatches.length === 0, ...result }
      return report.ok ? report : new FailedOutput(report)
    },
  },
  'partitions list': {
    options: {},
    run: (db) => partitionListing(db),
  },
  'partitions maintain': {
    options: {},
    async run(db, _options, _positionals, _now, config) {
      const result = await maintainPartitions({
        db,
        clock: systemClock,
        retention: {
          quoteDays: config.QUOTE_RETENTION_DAYS,
          webhookAttemptDays: config.WEBHOOK_ATTEMPT_RETENTION_DAYS,
          taxReceiptDays: config.TAX_RECEIPT_RETENTION_DAYS,
        },
      })
      return result ?? new FailedOutput({ error: 'another process is maintaining the partitions; try again in a moment' })
    },
  },
  'report profit-share': {
    options: { from: str, to: str, organisation: str },
    validate(options) {
      isoDateTime(options, 'from')
      isoDateTime(options, 'to')
      if (optional(options, 'organisation') !== undefined) uuid(options, 'organisation')
    },
    async run(db, options) {
      const access = new AccessResolver(db, 10_000)
      const records = await exportProfitShareRecordsAsOperator(
        { db, reads: db, access },
        {
          dateTimeFrom: isoDateTime(options, 'from'),
          dateTimeTo: isoDateTime(options, 'to'),
          organisationId: optional(options, 'organisation') === undefined ? undefined : uuid(options, 'organisation'),
        },
      )
      return new TextOutput(profitShareCsvChunks(records))
    },
  },
  'user create': {
    options: { organisation: str, email: str, role: str },
    validate(options) {
      uuid(options, 'organisation')
      if (!/^[^@\s]+@[^@\s]+$/.test(required(options, 'email'))) throw new UsageError('--email must be an e-mail address')
      if (!isRole(required(options, 'role'))) throw new UsageError('--role must be admin, developer or analyst')
    },
    async run(db, options, _p, now, config) {
      const role = required(options, 'role')
      if (!isRole(role)) throw new UsageError('--role must be admin, developer or analyst')
      const created = await createUserAsOperator(
        db,
        { organisationId: uuid(options, 'organisation'), email: required(options, 'email'), role },
        { now, publicBaseUrl: publicBaseUrl(config) },
      )
      return {
        userId: created.user.id,
        organisationId: created.user.organisationId,
        email: created.user.email,
        role: created.user.role,
        setPasswordUrl: created.setPasswordUrl,
      }
    },
  },
  'fx import': {
    options: {},
    async run(db, _options, positionals, now) {
      if (positionals.length !== 1) throw new UsageError('give exactly one ECB CSV file (eurofxref.csv or eurofxref-hist.csv)')
      const fileName = positionals[0] ?? ''
      return importFxRates(db, { csv: readText(fileName), fileName }, now)
    },
  },
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`)
  }
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readText(path))
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new ImportError([`${path} is not valid JSON: ${(error as Error).message}`])
  }
}

export async function main(argv: string[]): Promise<number> {
  const [group, action, ...rest] = argv
  const name = `${group ?? ''} ${action ?? ''}`
  const command = COMMANDS[name]
  if (!command || argv.includes('--help')) {
    const asked = argv.includes('--help') || argv.length === 0
    ;(asked ? console.log : console.error)(command || asked ? USAGE : `unknown command "${argv.join(' ')}"\n\n${USAGE}`)
    return asked ? 0 : 2
  }
  let parsed
  try {
    parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true })
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`)
    return 2
  }
  command.validate?.(parsed.values, parsed.positionals)
  loadDotEnvFile()
  const config = loadConfig()
  const database = await openConfiguredDatabase(config)
  try {
    await prepareSchema(database.db, database.backend === 'pglite')
    const result = await command.run(database.db, parsed.values, parsed.positionals, new Date(), config)
    if (result instanceof TextOutput) {
      for await (const chunk of result.chunks) {
        if (!process.stdout.write(chunk)) await once(process.stdout, 'drain')
      }
      return 0
    }
    if (result instanceof FailedOutput) {
      console.log(JSON.stringify(result.result, null, 2))
      return 1
    }
    console.log(JSON.stringify(result, null, 2))
    return 0
  } finally {
    await database.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`)
      process.exitCode = 2
      return
    }
    const known =
      error instanceof ConfigError ||
      error instanceof PendingMigrationsError ||
      error instanceof DataDirLockedError ||
      error instanceof AppError ||
      error instanceof DomainError ||
      error instanceof ImportError
    console.error(known ? `error: ${(error as Error).message}` : error)
    process.exitCode = 1
  },
)
