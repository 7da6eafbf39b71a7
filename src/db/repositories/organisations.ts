// Organisations and their tree (parent_id).
import { sql, type Kysely } from 'kysely'
import { formatRate } from '../../domain/money.js'
import type { AddressJson, Database, OrganisationRow } from '../database.js'

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
  status: 'active' | 'inactive'
  createdAt: Date
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
  status: row.status,
  createdAt: row.created_at,
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
      status: org.status,
      created_at: org.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return organisationFromRow(row)
}

export async function findOrganisationById(db: Kysely<Database>, id: string): Promise<Organisation | undefined> {
  const row = await db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst()
  return row && organisationFromRow(row)
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
