// Kysely table types. numeric columns are strings (both pg and PGlite return numeric as text);
// money is converted to Decimal in the domain, never to a JS number.
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'
import type { SettlementModel } from '../domain/profit-share.js'
import type { DecimalString, LockedQuote, PartnerImages } from '../domain/types.js'

/** The validated quote request as stored with a quote (wire field names). */
export interface QuoteRequestRecord {
  organisationId: string
  locale?: string | undefined
  consumer: { reference: string; countryCode: string; postalCode?: string; city?: string; state?: string }
  merchant?:
    | {
        name: string
        mcc: string
        address: { countryCode: string; line1?: string; line2?: string; line3?: string; city?: string; postalCode?: string; state?: string }
      }
    | null
    | undefined
  transaction: { amount: number; currencyCode: string }
  orderItems?: unknown[] | null | undefined
  matchConsumerLocation: boolean
  responseOptions: { includeImpactPartnerDetails: boolean; includeImpactPartnerRates: boolean }
  /** What produced the quote: a direct quote call, or a session. */
  origin: 'quote' | 'post-purchase-session' | 'checkout-session'
}

export type Numeric = ColumnType<string, string, string>
export type Timestamp = ColumnType<Date, Date | undefined, Date>

export interface AddressJson {
  line1: string
  line2?: string | null
  line3?: string | null
  city: string
  postalCode: string
  state?: string | null
  countryCode: string
}

export interface OrganisationsTable {
  id: string
  parent_id: string | null
  trading_name: string
  legal_name: string
  organisation_reference: string | null
  address: ColumnType<AddressJson, string, string>
  country_code: string
  currency_code: string
  website: string | null
  mcc: string | null
  service_fee_rate: Numeric
  tax_liability: 'platform' | 'organisation'
  /** Its share of what its parent receives of a service fee, 0–1 (migrations/2026_11_24_001600_profit_share.ts). */
  relative_profit_share: ColumnType<string, string | undefined, string>
  /** Where and how it is billed; null: in its own currency, taxed where its address is. */
  billing: ColumnType<BillingJson | null, string | null | undefined, string | null>
  /** A root's settlement model (descendants inherit it); null: the default (gross) on a root, inherited below. */
  settlement_model: ColumnType<SettlementModel | null, SettlementModel | null | undefined, SettlementModel | null>
  status: 'active' | 'inactive'
  created_at: Timestamp
  /** Normalised web origins allowed to read sessions in a browser; null = inherit the nearest ancestor's. */
  allowed_origins: ColumnType<string[] | null, string[] | null | undefined, string[] | null>
  /** Addresses the organisation's API keys may call from; null = inherit the nearest ancestor's. */
  ip_allowlist: ColumnType<IpAllowlistJson | null, string | null | undefined, string | null>
  /** Its Hub users (and its descendants') must sign in with a second factor. */
  require_totp: ColumnType<boolean, boolean | undefined, boolean>
}

/** organisations.ip_allowlist: normalised entries (addresses, CIDR blocks, ranges "a-b"). */
export interface IpAllowlistJson {
  enabled: boolean
  entries: string[]
}

/** organisations.billing: the details an organisation is billed with (its profit share, its invoices). */
export interface BillingJson {
  currencyCode: string
  email: string | null
  taxNumber: string | null
  companyRegistrationNumber: string | null
  /** ISO 3166-1 alpha-3: where the tax on its profit share is due. */
  countryCode: string
  /** For US and Canadian tax, the state or province (normalised code), else null. */
  state: string | null
}

export interface ApiKeysTable {
  id: string
  organisation_id: string
  mode: 'live' | 'test'
  key_hash: Uint8Array
  prefix: string
  created_at: Timestamp
  revoked_at: Date | null
  /** Set when the key is rotated (or its expiry otherwise fixed): after it, the key authenticates as revoked. */
  expires_at: Date | null
  /** The key that replaced this one when it was rotated. */
  replaced_by_id: string | null
  /** When the key last authenticated, to the minute. */
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

export interface ImpactPartnersTable {
  id: string
  kind: 'credits' | 'contribution'
  name: string
  short_description: string
  long_description: string | null
  website: string | null
  images: ColumnType<PartnerImages, string, string>
  priority: number
  active: boolean
  updated_at: Timestamp
}

export interface ProjectsTable {
  id: string
  impact_partner_id: string
  name: string
  short_description: string
  long_description: string | null
  type: string
  country_code: string | null
  state: string | null
  price: Numeric
  price_currency: string
  priority: number
  weight: ColumnType<string | null, string | null, string | null>
  active: boolean
  updated_at: Timestamp
}

export interface OrganisationImpactPartnersTable {
  organisation_id: string
  impact_partner_id: string
}

export interface EmissionFactorsTable {
  id: string
  kind: 'carbon' | 'nature'
  mcc_from: number
  mcc_to: number
  region: string
  value: Numeric
  base_currency: string
  price_year: number
  source: string
  version: string
  licence: string
  tailpipe_value: ColumnType<string | null, string | null, string | null>
  note: string | null
  imported_at: Timestamp
}

export interface QuotesTable {
  id: string
  organisation_id: string
  impact_type: 'carbon' | 'nature'
  currency_code: string
  tax_liability: 'platform' | 'organisation'
  /** The quote request without what the row or a default says (StoredQuoteRequest). */
  request: ColumnType<StoredQuoteRequest, string, string>
  /** What only this quote locked (CompactLockedQuote); rows written before compact quotes hold a LegacyLockedQuote. */
  locked: ColumnType<StoredLockedQuote, string, string>
  /** quote_snapshots.id of its shared part (partners, projects, provenance, …); null only for rows written before snapshots. */
  snapshot_id: string | null
  created_at: Date
}

/**
 * quotes.request: the QuoteRequestRecord without the required fields that are the row's or their default, since
 * compact quotes: organisationId when it is the row's, matchConsumerLocation when false, responseOptions when both
 * are false. Rows written before carry all three (every request ever stored had them).
 */
export type StoredQuoteRequest = Omit<QuoteRequestRecord, 'organisationId' | 'matchConsumerLocation' | 'responseOptions'> &
  Partial<Pick<QuoteRequestRecord, 'organisationId' | 'matchConsumerLocation' | 'responseOptions'>>

/**
 * quotes.locked as written since compact quotes: only the figures of this quote, by position; its snapshot holds the
 * rest (QuoteSnapshotBody.shared). Decimals stay the exact strings the domain formatted.
 * - footprint: [co2eGrams, co2eOunces] (carbon) or [areaSquareMetres, areaSquareFeet] (nature);
 * - amounts: credits.amounts as [total, impact, impactTax, serviceFee, serviceFeeTax], null without credits;
 * - equivalents: each one's value, in the order of the snapshot's templates, or [value, text] when the number in its
 *   description is not written as String(value) (e.g. "1,234").
 */
export type CompactLockedQuote = [
  footprint: [DecimalString, DecimalString],
  amounts: [DecimalString, DecimalString, DecimalString, DecimalString, DecimalString] | null,
  equivalents: StoredEquivalentValue[],
]

/** An equivalent's value, or [value, the number as its description writes it] when that is not String(value). */
export type StoredEquivalentValue = number | [value: number, text: string]

/**
 * quotes.locked as written before compact quotes: the locked quote without what its snapshot held then. Rows written
 * before a part moved to the snapshot still carry it inline.
 */
export type LegacyLockedQuote = Omit<LockedQuote, 'partners' | 'credits' | 'provenance'> & {
  partners?: LockedQuote['partners']
  provenance?: LockedQuote['provenance']
  credits?: Omit<NonNullable<LockedQuote['credits']>, 'projects'> & { projects?: NonNullable<LockedQuote['credits']>['projects'] }
}

export type StoredLockedQuote = CompactLockedQuote | LegacyLockedQuote

/**
 * An equivalent's description with its number taken out: [key, before, after] (description = before + number +
 * after), or [key, description] when it shows no number ("once").
 */
export type EquivalentTemplate = [key: string, before: string, after: string] | [key: string, description: string]

/** What the quotes of a snapshot lock alike, beyond partners, projects and provenance (compact quotes). */
export interface SharedLockedQuote {
  impactType: LockedQuote['impactType']
  currencyCode: string
  minorUnits: number
  locale: string
  footprintKind: LockedQuote['footprint']['kind']
  equivalents: EquivalentTemplate[]
  /** null: no credits section (nature). */
  credits: Omit<NonNullable<LockedQuote['credits']>, 'projects' | 'amounts'> | null
  contribution: LockedQuote['contribution']
}

/** The part of a locked quote many quotes share: stored once per distinct content. */
export interface QuoteSnapshotBody {
  partners: LockedQuote['partners']
  projects: NonNullable<LockedQuote['credits']>['projects']
  /** Absent from snapshots written before provenance moved here (their quotes carry it inline). */
  provenance?: LockedQuote['provenance']
  /** Absent from snapshots written before compact quotes (their quotes carry it inline). */
  shared?: SharedLockedQuote
}

export interface QuoteSnapshotsTable {
  id: string
  body: ColumnType<QuoteSnapshotBody, string, never>
  created_at: Generated<Date>
}

export interface SessionsTable {
  id: string
  organisation_id: string
  quote_id: string
  kind: 'post-purchase' | 'checkout'
  sdk_variant: 'embedded' | 'takeover' | null
  impact_type: 'carbon' | 'nature'
  client_secret_hash: Uint8Array
  expires_at: Date
  created_at: Date
}

export interface AllocationsTable {
  id: string
  organisation_id: string
  quote_id: string
  idempotency_key: string
  request_hash: Uint8Array
  currency_code: string
  credits_amount: ColumnType<string | null, string | null, never>
  contribution_amount: ColumnType<string | null, string | null, never>
  tax_liability: 'platform' | 'organisation'
  issue_tax_receipt: boolean
  entries: ColumnType<StoredAllocationEntries, string, never>
  created_at: Date
  /** The top of the organisation's tree (set by the INSERT itself: organisation_root()). */
  root_organisation_id: string
  /** The organisation of the API key that made the allocation. */
  collection_organisation_id: string
  /** The quote's consumer.reference. */
  consumer_reference: string | null
  /** The quote's merchant, in rows written before migration 002700; NULL in rows since (see merchant_id). */
  merchant: ColumnType<StoredMerchant | null, string | null, never>
  /** merchant_snapshots.id of the quote's merchant, when it named one (rows since migration 002700). */
  merchant_id: ColumnType<string | null, string | null, never>
  /** Its profit-share lines; null when no organisation up the chain keeps a share. */
  profit_share: ColumnType<StoredProfitShare | null, string | null | undefined, never>
}

/**
 * allocations.profit_share, compact (every byte is WAL on every allocation): the settlement model, then one array per
 * beneficiary, root first: [level, fundsShare, taxRate, tax], plus [billingCurrency, rate, billingShare] when it is
 * billed in another currency than the funds. Amounts and rates are decimal strings; level is the depth in the tree.
 */
export type StoredProfitShare = [SettlementModel, ...StoredProfitShareLine[]]
export type StoredProfitShareLine = [number, string, string, string] | [number, string, string, string, string, string, string]

/** allocations.merchant: the quote request's merchant. */
export type StoredMerchant = NonNullable<QuoteRequestRecord['merchant']>

/**
 * One element of allocations.entries, compact like profit_share (every byte is WAL on every allocation): one positional
 * array per line, [kind, impactPartnerId, projectId, quantityTonnes, impactAmount, impactSalesTaxRate,
 * impactSalesTaxAmount, serviceFeeAmount, serviceFeeSalesTaxRate, serviceFeeSalesTaxAmount]. kind is 'cr' (a credit,
 * with its project and tonnes) or 'co' (a contribution: both null). Amounts, rates and tonnes are exact decimal strings
 * in the allocation currency (migrations/2026_11_27_002400_compact_entries.ts; the SQL reading them names positions).
 */
export type StoredAllocationEntry = StoredCreditEntry | StoredContributionEntry
/**
 * allocations.entries as a row holds it: since migrations/2026_11_28_003100_entries_as_strings.ts a line is written as
 * one string (StoredAllocationLine), while lines written before stay arrays. SQL reads either through
 * allocation_lines(entries), which gives every line as the array; TypeScript through splitOf (repositories/allocations.ts).
 */
export type StoredAllocationEntries = readonly (StoredAllocationEntry | StoredAllocationLine)[]
/**
 * A line as one string: the ten values of StoredAllocationEntry in its order, joined by '|', an absent one empty, and
 * the two ids (impactPartnerId, projectId) as their 16 bytes in base64 without the padding (22 characters).
 */
export type StoredAllocationLine = string
export type StoredCreditEntry = [
  kind: 'cr',
  impactPartnerId: string,
  projectId: string,
  quantityTonnes: string,
  ...amounts: StoredEntryAmounts,
]
export type StoredContributionEntry = [
  kind: 'co',
  impactPartnerId: string,
  projectId: null,
  quantityTonnes: null,
  ...amounts: StoredEntryAmounts,
]
export type StoredEntryAmounts = [
  impactAmount: string,
  impactSalesTaxRate: string,
  impactSalesTaxAmount: string,
  serviceFeeAmount: string,
  serviceFeeSalesTaxRate: string,
  serviceFeeSalesTaxAmount: string,
]

/** A merchant as quotes named it, stored once per distinct content (its id: merchantSnapshotIdOf in repositories/allocations.ts). */
export interface MerchantSnapshotsTable {
  id: string
  body: ColumnType<StoredMerchant, string, never>
  created_at: Generated<Date>
}

/** A view over allocations.entries (read only): a row per line, its kind spelled out. */
export interface AllocationEntriesTable {
  allocation_id: string
  position: number
  kind: 'credit' | 'contribution'
  project_id: string | null
  impact_partner_id: string
  impact_amount: Numeric
  impact_sales_tax_amount: Numeric
  impact_sales_tax_rate: Numeric
  service_fee_amount: Numeric
  service_fee_sales_tax_amount: Numeric
  service_fee_sales_tax_rate: Numeric
  quantity_tonnes: ColumnType<string | null, never, never>
}

export interface AllocationReversalsTable {
  id: string
  allocation_id: string
  /** Its allocation's created_at: names the allocation's partition row (the foreign key holds it). */
  allocation_created_at: Date
  organisation_id: string
  created_at: Date
  /** Copied from its allocation when written. */
  root_organisation_id: string
  consumer_reference: string | null
}

/**
 * One row per (organisation, Idempotency-Key) of an allocation (migrations/2026_11_25_002300_partition_ledger.ts): the
 * lookup that decides every retry, one index probe naming the allocation's partition row. Kept as long as allocations.
 */
export interface AllocationIdempotencyKeysTable {
  organisation_id: string
  idempotency_key: string
  allocation_id: string
  allocation_created_at: Date
}

/**
 * One reversal per allocation (migrations/2026_11_25_002300_partition_ledger.ts): reversals are partitioned by their own
 * time, so the allocation's unique key lives here, naming the reversal's partition row.
 */
export interface AllocationReversalKeysTable {
  allocation_id: string
  reversal_id: string
  reversal_created_at: Date
}

/** One row per distinct impact partner of a reconciliation record (migrations/2026_11_23_001400_impact_partner_records.ts). */
export interface ImpactRecordPartnersTable {
  impact_partner_id: string
  root_organisation_id: string
  /** The record's created_at. */
  funds_date_time: Date
  /** The allocation's id, or the reversal's. */
  record_id: string
  /** The record's organisation; NULL when it is the top of its tree (root_organisation_id; rows written before
   * migration 002800 repeat it). */
  organisation_id: string | null
  /** A reversal's rows: its allocation's id. NULL for an allocation's rows (the record's own; rows written before
   * migration 002600 repeat it). */
  allocation_id: string | null
  /** A reversal's rows: its allocation's created_at (its partition). NULL with allocation_id. */
  allocation_created_at: Date | null
}

/** Sums of impact records per period (migrations/2026_11_24_001700_allocation_rollups.ts, docs/summary.md). */
export interface AllocationRollupsTable {
  root_organisation_id: string
  dimension: 'total' | 'partner' | 'project'
  /** The records' organisation, or the nil uuid: the whole tree. */
  organisation_id: string
  grain: 'week' | 'day' | 'hour' | 'quarter'
  period_start: Date
  /** The impact partner or project; the nil uuid for 'total'. */
  group_id: string
  currency_code: string
  allocations: number
  reversals: number
  credits_impact: Numeric
  credits_impact_tax: Numeric
  credits_service_fee: Numeric
  credits_service_fee_tax: Numeric
  credits_quantity_tonnes: Numeric
  contributions_impact: Numeric
  contributions_impact_tax: Numeric
  contributions_service_fee: Numeric
  contributions_service_fee_tax: Numeric
}

/** One row: every rollup is complete for the records before rolled_until (null: nothing rolled up yet). */
export interface AllocationRollupStateTable {
  id: boolean
  rolled_until: Date | null
  updated_at: Date | null
}

export interface TaxReceiptsTable {
  id: string
  allocation_id: string
  organisation_id: string
  consumer_email: string
  payload: ColumnType<TaxReceiptPayload, string, string>
  status: 'pending' | 'sent' | 'failed'
  attempts: number
  next_attempt_at: Date
  locked_until: Date | null
  last_error: string | null
  sent_at: Date | null
  created_at: Date
}

/** What a tax receipt e-mail says (frozen when the allocation is made). */
export interface TaxReceiptPayload {
  fundsAllocationId: string
  organisationName: string
  currencyCode: string
  /** Decimal strings in the allocation currency. */
  totalPaid: string
  contributions: { impactPartnerName: string; impactAmount: string }[]
  allocatedAt: string
}

/** Operator-imported reference exchange rates: units of currency_code per 1 EUR on rate_date. */
export interface FxRatesTable {
  /** A date column: read it as text (YYYY-MM-DD), never as a JS Date (local midnight). */
  rate_date: ColumnType<string, string, string>
  currency_code: string
  rate: Numeric
  source: string
  imported_at: Date
}

export interface WebhookEndpointsTable {
  id: string
  organisation_id: string
  url: string
  description: string
  enabled_events: string[]
  format: 'standard' | 'ekko'
  status: 'enabled' | 'disabled'
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>
  failing_since: ColumnType<Date | null, Date | null | undefined, Date | null>
  created_at: Date
  updated_at: Date
}

export interface WebhookEndpointSecretsTable {
  id: string
  endpoint_id: string
  secret: string
  created_at: Date
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>
}

/**
 * An event. An allocation's or a reversal's names its record (source_id) and its body is rendered when its first
 * delivery is claimed (stored on the delivery); a test event, and an event written before that, carries its body
 * (and ekko_body for ekko-format endpoints), sent exactly as stored.
 */
export interface WebhookEventsTable {
  id: string
  organisation_id: string
  type: string
  body: ColumnType<string | null, string | null | undefined, string | null>
  ekko_body: ColumnType<string | null, string | null | undefined, string | null>
  /** The allocation or reversal the event announces. */
  source_id: ColumnType<string | null, string | null | undefined, string | null>
  /** The quote's footprint in grams CO2e (ekko-format bodies carry it; the ledger does not keep it). */
  quote_co2e_grams: ColumnType<string | null, string | null | undefined, string | null>
  created_at: Date
}

export interface WebhookDeliveriesTable {
  id: string
  event_id: string
  endpoint_id: string
  status: ColumnType<'pending' | 'succeeded' | 'failed', 'pending' | undefined, 'pending' | 'succeeded' | 'failed'>
  attempts: Generated<number>
  /** A manual retry: one attempt, never rescheduled. */
  manual: Generated<boolean>
  next_attempt_at: Date
  locked_until: Date | null
  last_attempt_at: Date | null
  /** What this delivery sends, byte for byte: rendered at its first claim, or null until then. */
  body: ColumnType<string | null, string | null | undefined, string | null>
  /** The format `body` was rendered in (an endpoint switched to another format gets it rendered again). */
  body_format: ColumnType<'standard' | 'ekko' | null, 'standard' | 'ekko' | null | undefined, 'standard' | 'ekko' | null>
  created_at: Date
}

export interface WebhookAttemptsTable {
  id: string
  delivery_id: string
  attempted_at: Date
  duration_ms: number
  status_code: number | null
  error: string | null
  response_body: string | null
}

/** The append-only audit log (migrations/2026_11_24_001500_audit_events.ts): never updated or deleted. */
export interface AuditEventsTable {
  id: string
  organisation_id: string
  type: string
  actor_type: 'user' | 'apiKey' | 'operator'
  actor_id: string | null
  actor_label: string
  ip: string | null
  changes: ColumnType<Record<string, unknown>, string, never>
  created_at: ColumnType<Date, Date, never>
}

export interface UsersTable {
  id: string
  organisation_id: string
  email: string
  role: 'admin' | 'developer' | 'analyst'
  /** Argon2id PHC string; null until the user sets a password. */
  password_hash: string | null
  password_set_at: Date | null
  totp_secret: string | null
  totp_enabled_at: Date | null
  /** A secret being enrolled, until a first code confirms it. */
  totp_pending_secret: string | null
  /** The last TOTP time step accepted (a code is never accepted twice). */
  totp_last_step: ColumnType<string | null, string | number | null, string | number | null>
  created_at: Date
  updated_at: Date
}

export interface HubSessionsTable {
  id: string
  user_id: string
  token_hash: Uint8Array
  csrf_token: string
  stage: 'second_factor' | 'enrol_second_factor' | 'active'
  ip: string | null
  user_agent: string | null
  created_at: Date
  last_seen_at: Date
  /** The absolute end of the session. */
  expires_at: Date
}

export interface HubPasswordTokensTable {
  id: string
  user_id: string
  token_hash: Uint8Array
  created_at: Date
  expires_at: Date
  used_at: Date | null
}

export interface HubRecoveryCodesTable {
  user_id: string
  code_hash: Uint8Array
  used_at: Date | null
}

export interface HubSignInFailuresTable {
  key: string
  failures: number
  last_failure_at: Date
  expires_at: Date
}

export interface HubEmailsTable {
  id: string
  to_address: string
  subject: string
  body: string
  status: ColumnType<'pending' | 'sent' | 'failed', 'pending' | undefined, 'pending' | 'sent' | 'failed'>
  attempts: Generated<number>
  next_attempt_at: Date
  locked_until: Date | null
  last_error: string | null
  sent_at: Date | null
  created_at: Date
}

export interface Database {
  organisations: OrganisationsTable
  api_keys: ApiKeysTable
  impact_partners: ImpactPartnersTable
  projects: ProjectsTable
  organisation_impact_partners: OrganisationImpactPartnersTable
  emission_factors: EmissionFactorsTable
  quotes: QuotesTable
  /** Allocated quotes of the months retention dropped from quotes (docs/partitioning.md): the same columns. */
  retained_quotes: QuotesTable
  quote_snapshots: QuoteSnapshotsTable
  sessions: SessionsTable
  allocations: AllocationsTable
  merchant_snapshots: MerchantSnapshotsTable
  allocation_entries: AllocationEntriesTable
  allocation_reversals: AllocationReversalsTable
  allocation_idempotency_keys: AllocationIdempotencyKeysTable
  allocation_reversal_keys: AllocationReversalKeysTable
  impact_record_partners: ImpactRecordPartnersTable
  tax_receipts: TaxReceiptsTable
  allocation_rollups: AllocationRollupsTable
  allocation_rollup_state: AllocationRollupStateTable
  fx_rates: FxRatesTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_endpoint_secrets: WebhookEndpointSecretsTable
  webhook_events: WebhookEventsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  audit_events: AuditEventsTable
  users: UsersTable
  hub_sessions: HubSessionsTable
  hub_password_tokens: HubPasswordTokensTable
  hub_recovery_codes: HubRecoveryCodesTable
  hub_sign_in_failures: HubSignInFailuresTable
  hub_emails: HubEmailsTable
}

export type OrganisationRow = Selectable<OrganisationsTable>
export type NewOrganisationRow = Insertable<OrganisationsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type NewApiKeyRow = Insertable<ApiKeysTable>
export type QuoteRow = Selectable<QuotesTable>
export type NewQuoteRow = Insertable<QuotesTable>
export type SessionRow = Selectable<SessionsTable>
export type NewSessionRow = Insertable<SessionsTable>
export type AllocationRow = Selectable<AllocationsTable>
export type NewAllocationRow = Insertable<AllocationsTable>
