import { sql, type Kysely, type Transaction } from 'kysely'
import type { CreditProject, EmissionFactor, ImpactPartner, PartnerImages } from '../../domain/types.js'
import type { Database } from '../database.js'

/** Every impact partner (active or not): a quote filters by activity itself. */
export async function findImpactPartners(db: Kysely<Database>): Promise<ImpactPartner[]> {
  const rows = await db
    .selectFrom('impact_partners')
    .select(['id', 'kind', 'name', 'short_description', 'images', 'priority', 'active'])
    .orderBy('id')
    .execute()
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    name: r.name,
    shortDescription: r.short_description,
    images: r.images,
    priority: r.priority,
    active: r.active,
  }))
}

export async function findActiveProjects(db: Kysely<Database>): Promise<CreditProject[]> {
  const rows = await db.selectFrom('projects').selectAll().where('active', '=', true).orderBy('id').execute()
  return rows.map((r) => ({
    id: r.id,
    impactPartnerId: r.impact_partner_id,
    name: r.name,
    shortDescription: r.short_description,
    type: r.type,
    location: { countryCode: r.country_code, state: r.state },
    price: r.price,
    priceCurrency: r.price_currency,
    priority: r.priority,
    weight: r.weight,
    active: r.active,
  }))
}

/** Operator-imported emission factors (they take precedence over the embedded defaults). */
export async function findImportedFactors(db: Kysely<Database>): Promise<EmissionFactor[]> {
  const rows = await db.selectFrom('emission_factors').selectAll().orderBy('id').execute()
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    mccFrom: r.mcc_from,
    mccTo: r.mcc_to,
    region: r.region,
    value: r.value,
    baseCurrency: r.base_currency,
    priceYear: r.price_year,
    source: r.source,
    version: r.version,
    licence: r.licence,
    tailpipeValue: r.tailpipe_value ?? undefined,
    note: r.note ?? undefined,
  }))
}

/**
 * The impact partners an organisation may use: its own list, else the nearest ancestor's list;
 * undefined when no organisation in its chain restricts them (= all partners).
 */
export async function findAllowedPartnerIds(db: Kysely<Database>, organisationId: string): Promise<string[] | undefined> {
  const { rows } = await sql<{ depth: number; impact_partner_id: string }>`
    WITH RECURSIVE chain AS (
      SELECT id, parent_id, 0 AS depth FROM organisations WHERE id = ${organisationId}
      UNION ALL
      SELECT o.id, o.parent_id, c.depth + 1 FROM organisations o JOIN chain c ON o.id = c.parent_id WHERE c.depth < 32
    )
    SELECT c.depth, p.impact_partner_id FROM chain c
    JOIN organisation_impact_partners p ON p.organisation_id = c.id
    ORDER BY c.depth, p.impact_partner_id`.execute(db)
  if (rows.length === 0) return undefined
  const nearest = rows[0]?.depth
  return rows.filter((r) => r.depth === nearest).map((r) => r.impact_partner_id)
}

export interface PartnerUpsert extends ImpactPartner {
  longDescription?: string | null | undefined
  website?: string | null | undefined
}

export interface ProjectUpsert extends CreditProject {
  longDescription?: string | null | undefined
}

export async function upsertImpactPartners(trx: Transaction<Database>, partners: readonly PartnerUpsert[], now: Date): Promise<void> {
  if (partners.length === 0) return
  await trx
    .insertInto('impact_partners')
    .values(
      partners.map((p) => ({
        id: p.id,
        kind: p.kind,
        name: p.name,
        short_description: p.shortDescription,
        long_description: p.longDescription ?? null,
        website: p.website ?? null,
        images: JSON.stringify(p.images),
        priority: p.priority,
        active: p.active,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        kind: eb.ref('excluded.kind'),
        name: eb.ref('excluded.name'),
        short_description: eb.ref('excluded.short_description'),
        long_description: eb.ref('excluded.long_description'),
        website: eb.ref('excluded.website'),
        images: eb.ref('excluded.images'),
        priority: eb.ref('excluded.priority'),
        active: eb.ref('excluded.active'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute()
}

export async function upsertProjects(trx: Transaction<Database>, projects: readonly ProjectUpsert[], now: Date): Promise<void> {
  if (projects.length === 0) return
  await trx
    .insertInto('projects')
    .values(
      projects.map((p) => ({
        id: p.id,
        impact_partner_id: p.impactPartnerId,
        name: p.name,
        short_description: p.shortDescription,
        long_description: p.longDescription ?? null,
        type: p.type,
        country_code: p.location.countryCode,
        state: p.location.state,
        price: p.price,
        price_currency: p.priceCurrency,
        priority: p.priority,
        weight: p.weight,
        active: p.active,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        impact_partner_id: eb.ref('excluded.impact_partner_id'),
        name: eb.ref('excluded.name'),
        short_description: eb.ref('excluded.short_description'),
        long_description: eb.ref('excluded.long_description'),
        type: eb.ref('excluded.type'),
        country_code: eb.ref('excluded.country_code'),
        state: eb.ref('excluded.state'),
        price: eb.ref('excluded.price'),
        price_currency: eb.ref('excluded.price_currency'),
        priority: eb.ref('excluded.priority'),
        weight: eb.ref('excluded.weight'),
        active: eb.ref('excluded.active'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute()
}

/** Replaces the partner lists of the given organisations. */
export async function replaceOrganisationPartners(
  trx: Transaction<Database>,
  lists: readonly { organisationId: string; impactPartnerIds: readonly string[] }[],
): Promise<void> {
  for (const { organisationId, impactPartnerIds } of lists) {
    await trx.deleteFrom('organisation_impact_partners').where('organisation_id', '=', organisationId).execute()
    if (impactPartnerIds.length > 0) {
      await trx
        .insertInto('organisation_impact_partners')
        .values(impactPartnerIds.map((id) => ({ organisation_id: organisationId, impact_partner_id: id })))
        .execute()
    }
  }
}

export async function upsertEmissionFactors(trx: Transaction<Database>, factors: readonly EmissionFactor[], now: Date): Promise<void> {
  for (let i = 0; i < factors.length; i += 500) {
    const chunk = factors.slice(i, i + 500)
    await trx
      .insertInto('emission_factors')
      .values(
        chunk.map((f) => ({
          id: f.id,
          kind: f.kind,
          mcc_from: f.mccFrom,
          mcc_to: f.mccTo,
          region: f.region,
          value: f.value,
          base_currency: f.baseCurrency,
          price_year: f.priceYear,
          source: f.source,
          version: f.version,
          licence: f.licence,
          tailpipe_value: f.tailpipeValue ?? null,
          note: f.note ?? null,
          imported_at: now,
        })),
      )
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          kind: eb.ref('excluded.kind'),
          mcc_from: eb.ref('excluded.mcc_from'),
          mcc_to: eb.ref('excluded.mcc_to'),
          region: eb.ref('excluded.region'),
          value: eb.ref('excluded.value'),
          base_currency: eb.ref('excluded.base_currency'),
          price_year: eb.ref('excluded.price_year'),
          source: eb.ref('excluded.source'),
          version: eb.ref('excluded.version'),
          licence: eb.ref('excluded.licence'),
          tailpipe_value: eb.ref('excluded.tailpipe_value'),
          note: eb.ref('excluded.note'),
          imported_at: eb.ref('excluded.imported_at'),
        })),
      )
      .execute()
  }
}

/** A page of the catalogue, in id order: after or before an id (at most one), at most `limit` rows. */
export interface CataloguePage {
  /** Only these partners (an organisation's list); undefined: every partner. */
  allowedPartnerIds?: readonly string[] | undefined
  after?: string | undefined
  before?: string | undefined
  limit: number
}

export interface CataloguePartner {
  id: string
  name: string
  shortDescription: string
  longDescription: string | null
  website: string | null
  images: PartnerImages
}

/** Active impact partners in id order (newest first when reading backward: the caller flips the page). */
export async function findCataloguePartners(db: Kysely<Database>, page: CataloguePage): Promise<CataloguePartner[]> {
  let query = db
    .selectFrom('impact_partners')
    .select(['id', 'name', 'short_description', 'long_description', 'website', 'images'])
    .where('active', '=', true)
  if (page.allowedPartnerIds !== undefined)
    query = query.where('id', 'in', page.allowedPartnerIds.length ? page.allowedPartnerIds : [NO_ID])
  if (page.after !== undefined) query = query.where('id', '>', page.after)
  if (page.before !== undefined) query = query.where('id', '<', page.before)
  const rows = await query
    .orderBy('id', page.before !== undefined ? 'desc' : 'asc')
    .limit(page.limit)
    .execute()
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    shortDescription: r.short_description,
    longDescription: r.long_description,
    website: r.website,
    images: r.images,
  }))
}

/** Active projects of active partners (allowed ones, when given), in id order; optionally one project. */
export async function findCatalogueProjects(
  db: Kysely<Database>,
  page: CataloguePage & { projectId?: string | undefined },
): Promise<CreditProject[]> {
  let query = db
    .selectFrom('projects as p')
    .innerJoin('impact_partners as ip', 'ip.id', 'p.impact_partner_id')
    .selectAll('p')
    .where('p.active', '=', true)
    .where('ip.active', '=', true)
  if (page.allowedPartnerIds !== undefined) {
    query = query.where('p.impact_partner_id', 'in', page.allowedPartnerIds.length ? page.allowedPartnerIds : [NO_ID])
  }
  if (page.projectId !== undefined) query = query.where('p.id', '=', page.projectId)
  if (page.after !== undefined) query = query.where('p.id', '>', page.after)
  if (page.before !== undefined) query = query.where('p.id', '<', page.before)
  const rows = await query
    .orderBy('p.id', page.before !== undefined ? 'desc' : 'asc')
    .limit(page.limit)
    .execute()
  return rows.map((r) => ({
    id: r.id,
    impactPartnerId: r.impact_partner_id,
    name: r.name,
    shortDescription: r.short_description,
    type: r.type,
    location: { countryCode: r.country_code, state: r.state },
    price: r.price,
    priceCurrency: r.price_currency,
    priority: r.priority,
    weight: r.weight,
    active: r.active,
  }))
}

/** Matches no row: an empty allowed list allows nothing (an IN () is not SQL). */
const NO_ID = '00000000-0000-0000-0000-000000000000'
