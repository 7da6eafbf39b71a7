// Organisations and their tree (parent_id).
import { sql, type Kysely } from 'kysely'
import { formatRate } from '../../domain/money.js'
import type { SettlementModel } from '../../domain/profit-share.js'
import type { AddressJson, BillingJson, Database, IpAllowlistJson, OrganisationRow } from '../database.js'

export type TaxLiability = 'platform' | 'organisation'

export interface Organisation {
  id: string
  parentId: string | null
  organisationReference: string | null
  tradingName: string
  legalName: string
  address: AddressJson
  currencyCode: string
  website: string | null
  mcc: string | null
  /** Proportion of the impact amount, shortest decimal string ("0.2"). */
  serviceFeeRate: string
  taxLiability: TaxLiability
  /** Its share of what its parent receives of a service fee, shortest decimal string ("0.6"). */
  relativeProfitShare: string
  /** Where and how it is billed; null: in its own currency, taxed where its address is. */
  billing: BillingJson | null
  /** Its own settlement model (roots only; null: inherited, or the default on a root). */
  settlementModel: SettlementModel | null
  status: 'active' | 'inactive'
  createdAt: Date
  /** Web origins whose pages may read this organisation's sessions (CORS); null = inherit the nearest ancestor's. */
  allowedOrigins: string[] | null
  /** Addresses its API keys may call from; null = inherit the nearest ancestor's. */
  ipAllowlist: IpAllowlistJson | null
  /** Its Hub users (and its descendants') must sign in with a second factor. */
  requireTotp: boolean
}

const organisationFromRow = (row: OrganisationRow): Organisation => ({
  id: row.id,
  parentId: row.parent_id,
  organisationReference: row.organisation_reference,
  tradingName: row.trading_name,
  legalName: row.legal_name,
  address: row.address,
  currencyCode: row.currency_code,
  website: row.website,
  mcc: row.mcc,
  serviceFeeRate: formatRate(row.service_fee_rate),
  taxLiability: row.tax_liability,
  relativeProfitShare: formatRate(row.relative_profit_share),
  billing: row.billing,
  settlementModel: row.settlement_model,
  status: row.status,
  createdAt: row.created_at,
  allowedOrigins: row.allowed_origins,
  ipAllowlist: row.ip_allowlist,
  requireTotp: row.require_totp,
})

export async function insertOrganisation(db: Kysely<Database>, org: Organisation): Promise<Organisation> {
  const row = await db
    .insertInto('organisations')
    .values({
      id: org.id,
      parent_id: org.parentId,
      trading_name: org.tradingName,
      legal_name: org.legalName,
      organisation_reference: org.organisationReference,
      address: JSON.stringify(org.address),
      country_code: org.address.countryCode,
      currency_code: org.currencyCode,
      website: org.website,
      mcc: org.mcc,
      service_fee_rate: org.serviceFeeRate,
      tax_liability: org.taxLiability,
      relative_profit_share: org.relativeProfitShare,
      billing: org.billing === null ? null : JSON.stringify(org.billing),
      settlement_model: org.settlementModel,
      status: org.status,
      created_at: org.createdAt,
      allowed_origins: org.allowedOrigins,
      ip_allowlist: org.ipAllowlist === null ? null : JSON.stringify(org.ipAllowlist),
      require_totp: org.requireTotp,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return organisationFromRow(row)
}

export async function findOrganisationById(db: Kysely<Database>, id: string): Promise<Organisation | undefined> {
  const row = await db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst()
  return row && organisationFromRow(row)
}

/**
 * The origins in force for an organisation (or for the organisation that owns a session): its own list, else its
 * nearest ancestor's that has one (an empty list counts: it allows nothing); [] when no organisation up the tree
 * has a list, and for an unknown organisation or session. Raw SQL: a recursive CTE.
 */
export async function findEffectiveAllowedOrigins(
  db: Kysely<Database>,
  of: { organisationId: string } | { sessionId: string },
): Promise<string[]> {
  const start =
    'sessionId' in of
      ? sql`SELECT o.id, o.parent_id, o.allowed_origins, 0 AS depth
            FROM sessions s JOIN organisations o ON o.id = s.organisation_id WHERE s.id = ${of.sessionId}`
      : sql`SELECT id, parent_id, allowed_origins, 0 AS depth FROM organisations WHERE id = ${of.organisationId}`
  const { rows } = await sql<{ allowed_origins: string[] }>`
    WITH RECURSIVE chain AS (
      ${start}
      UNION ALL
      SELECT o.id, o.parent_id, o.allowed_origins, c.depth + 1 FROM organisations o JOIN chain c ON o.id = c.parent_id
      WHERE c.allowed_origins IS NULL AND c.depth < 32
    )
    SELECT allowed_origins FROM chain WHERE allowed_origins IS NOT NULL ORDER BY depth LIMIT 1`.execute(db)
  return rows[0]?.allowed_origins ?? []
}

/** The organisation and all its active descendants (ids), following parent_id down the tree. */
export async function findActiveSubtreeIds(db: Kysely<Database>, rootId: string): Promise<string[]> {
  const result = await sql<{ id: string }>`
    WITH RECURSIVE subtree AS (
      SELECT id FROM organisations WHERE id = ${rootId} AND status = 'active'
      UNION ALL
      SELECT o.id FROM organisations o JOIN subtree s ON o.parent_id = s.id WHERE o.status = 'active'
    )
    SELECT id FROM subtree`.execute(db)
  return result.rows.map((r) => r.id)
}

export async function countOrganisations(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('organisations')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The top of an organisation's tree (itself when it has no parent); undefined for an unknown organisation. */
export async function findOrganisationRootId(db: Kysely<Database>, id: string): Promise<string | undefined> {
  const { rows } = await sql<{ root: string | null }>`SELECT organisation_root(${id}::uuid) AS root`.execute(db)
  return rows[0]?.root ?? undefined
}

/** The organisations at the top of a tree (no parent), oldest first. */
export async function findRootOrganisationIds(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom('organisations')
    .select('id')
    .where('parent_id', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map((r) => r.id)
}

/** What profit share reads of each organisation of a chain. */
export interface ChainOrganisation {
  id: string
  organisationReference: string | null
  relativeProfitShare: string
  billing: BillingJson | null
  settlementModel: SettlementModel | null
  currencyCode: string
  address: AddressJson
}

const chainOrganisationOf = (row: OrganisationRow): ChainOrganisation => ({
  id: row.id,
  organisationReference: row.organisation_reference,
  relativeProfitShare: formatRate(row.relative_profit_share),
  billing: row.billing,
  settlementModel: row.settlement_model,
  currencyCode: row.currency_code,
  address: row.address,
})

/** An organisation's rows up to the root, root first (the organisation last). Raw SQL: a recursive CTE up the parents. */
async function chainRows(db: Kysely<Database>, id: string): Promise<OrganisationRow[]> {
  const { rows } = await sql<OrganisationRow & { height: number }>`
    WITH RECURSIVE chain AS (
      SELECT o.*, 0 AS height FROM organisations o WHERE o.id = ${id}
      UNION ALL
      SELECT o.*, c.height + 1 FROM organisations o JOIN chain c ON o.id = c.parent_id WHERE c.height < 32
    )
    SELECT * FROM chain ORDER BY height DESC`.execute(db)
  return rows
}

/** An organisation's chain, root first and the organisation last (its index is its depth in the tree); [] for an unknown one. */
export async function findOrganisationChain(db: Kysely<Database>, id: string): Promise<ChainOrganisation[]> {
  return (await chainRows(db, id)).map(chainOrganisationOf)
}

/** An organisation and its chain (root first, the organisation last) in one read; undefined for an unknown one. */
export async function findOrganisationWithChain(
  db: Kysely<Database>,
  id: string,
): Promise<{ organisation: Organisation; chain: ChainOrganisation[] } | undefined> {
  const rows = await chainRows(db, id)
  const own = rows.at(-1)
  return own && { organisation: organisationFromRow(own), chain: rows.map(chainOrganisationOf) }
}

/** The settings a PATCH (or the operator) may change; an absent field is left as it is. */
export interface OrganisationSettingsChange {
  allowedOrigins?: string[] | null
  ipAllowlist?: IpAllowlistJson | null
  requireTotp?: boolean
  relativeProfitShare?: string
  billing?: BillingJson | null
  settlementModel?: SettlementModel | null
}

/** Changes an organisation's settings in one statement; undefined when not found. */
export async function updateOrganisationSettings(
  db: Kysely<Database>,
  id: string,
  change: OrganisationSettingsChange,
): Promise<Organisation | undefined> {
  const row = await db
    .updateTable('organisations')
    .set({
      ...(change.allowedOrigins === undefined ? {} : { allowed_origins: change.allowedOrigins }),
      ...(change.ipAllowlist === undefined
        ? {}
        : { ip_allowlist: change.ipAllowlist === null ? null : JSON.stringify(change.ipAllowlist) }),
      ...(change.requireTotp === undefined ? {} : { require_totp: change.requireTotp }),
      ...(change.relativeProfitShare === undefined ? {} : { relative_profit_share: change.relativeProfitShare }),
      ...(change.billing === undefined ? {} : { billing: change.billing === null ? null : JSON.stringify(change.billing) }),
      ...(change.settlementModel === undefined ? {} : { settlement_model: change.settlementModel }),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row && organisationFromRow(row)
}

/**
 * An organisation and all its descendants, inactive ones included (whatever their status, their allocations'
 * profit shares were earned). Raw SQL: a recursive CTE.
 */
export async function findSubtreeIds(db: Kysely<Database>, rootId: string): Promise<string[]> {
  const result = await sql<{ id: string }>`
    WITH RECURSIVE subtree AS (
      SELECT id, 0 AS depth FROM organisations WHERE id = ${rootId}
      UNION ALL
      SELECT o.id, s.depth + 1 FROM organisations o JOIN subtree s ON o.parent_id = s.id WHERE s.depth < 32
    )
    SELECT id FROM subtree`.execute(db)
  return result.rows.map((r) => r.id)
}

/** Activates or deactivates an organisation; undefined when not found. */
export async function updateOrganisationStatus(
  db: Kysely<Database>,
  id: string,
  status: Organisation['status'],
): Promise<Organisation | undefined> {
  const row = await db.updateTable('organisations').set({ status }).where('id', '=', id).returningAll().executeTakeFirst()
  return row && organisationFromRow(row)
}

/**
 * The IP allowlist in force for an organisation: its own, else its nearest ancestor's that has one; null when no
 * organisation up the tree has one. Raw SQL: a recursive CTE.
 */
export async function findEffectiveIpAllowlist(db: Kysely<Database>, organisationId: string): Promise<IpAllowlistJson | null> {
  const { rows } = await sql<{ ip_allowlist: IpAllowlistJson }>`
    WITH RECURSIVE chain AS (
      SELECT id, parent_id, ip_allowlist, 0 AS depth FROM organisations WHERE id = ${organisationId}
      UNION ALL
      SELECT o.id, o.parent_id, o.ip_allowlist, c.depth + 1 FROM organisations o JOIN chain c ON o.id = c.parent_id
      WHERE c.ip_allowlist IS NULL AND c.depth < 32
    )
    SELECT ip_allowlist FROM chain WHERE ip_allowlist IS NOT NULL ORDER BY depth LIMIT 1`.execute(db)
  return rows[0]?.ip_allowlist ?? null
}

/** True when the organisation or an organisation above it requires a second factor. Raw SQL: a recursive CTE. */
export async function findTotpRequired(db: Kysely<Database>, organisationId: string): Promise<boolean> {
  const { rows } = await sql<{ required: boolean | null }>`
    WITH RECURSIVE chain AS (
      SELECT id, parent_id, require_totp, 0 AS depth FROM organisations WHERE id = ${organisationId}
      UNION ALL
      SELECT o.id, o.parent_id, o.require_totp, c.depth + 1 FROM organisations o JOIN chain c ON o.id = c.parent_id
      WHERE c.depth < 32
    )
    SELECT bool_or(require_totp) AS required FROM chain`.execute(db)
  return rows[0]?.required === true
}

/**
 * An organisation and all its descendants, inactive ones included (to be managed, a deactivated child must be
 * seen), each with its depth below the top, in tree order (parents before children). Raw SQL: a recursive CTE.
 */
export async function findSubtreeOrganisations(db: Kysely<Database>, rootId: string): Promise<(Organisation & { depth: number })[]> {
  const { rows } = await sql<OrganisationRow & { depth: number; path: string }>`
    WITH RECURSIVE subtree AS (
      SELECT o.*, 0 AS depth, o.created_at::text || o.id::text AS path FROM organisations o WHERE o.id = ${rootId}
      UNION ALL
      SELECT o.*, s.depth + 1, s.path || '/' || o.created_at::text || o.id::text
      FROM organisations o JOIN subtree s ON o.parent_id = s.id WHERE s.depth < 32
    )
    SELECT * FROM subtree ORDER BY path`.execute(db)
  return rows.map((row) => ({ ...organisationFromRow(row), depth: Number(row.depth) }))
}
