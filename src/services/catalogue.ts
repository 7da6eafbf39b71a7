// Operator imports: the project catalogue (JSON) and emission factors (CSV). Both validate everything
// first and then upsert in one transaction, so a bad file changes nothing; importing twice is a no-op.
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { parse as parseCsv } from 'csv-parse/sync'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import {
  findImpactPartners,
  replaceOrganisationPartners,
  upsertEmissionFactors,
  upsertImpactPartners,
  upsertProjects,
} from '../db/repositories/catalogue.js'
import { findOrganisationById } from '../db/repositories/organisations.js'
import { isKnownCountry } from '../domain/countries.js'
import { DEMO_CREDIT_PROJECTS, DEMO_IMPACT_PARTNERS } from '../domain/data/demo-catalogue.js'
import { isPricedCurrency, REFERENCE_FX_RATES } from '../domain/fx.js'
import type { EmissionFactor, FxTable } from '../domain/types.js'
import { loadFxInUse } from './fx.js'
import { ImportError } from './import-error.js'

export { ImportError }

const Uuid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' })
const DecimalText = Type.String({ pattern: '^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,10})?$' })
const Image = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 500 }),
    type: Type.String({ minLength: 1, maxLength: 50 }),
    width: Type.Integer({ minimum: 1 }),
    height: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
)

export const CatalogueFileSchema = Type.Object(
  {
    $comment: Type.Optional(Type.String()),
    impactPartners: Type.Array(
      Type.Object(
        {
          id: Uuid,
          kind: Type.Union([Type.Literal('credits'), Type.Literal('contribution')]),
          name: Type.String({ minLength: 1, maxLength: 200 }),
          shortDescription: Type.String({ maxLength: 1000 }),
          longDescription: Type.Optional(Type.Union([Type.String({ maxLength: 10000 }), Type.Null()])),
          website: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
          images: Type.Object(
            {
              logos: Type.Optional(Type.Array(Image)),
              thumbnails: Type.Optional(Type.Array(Image)),
              backgrounds: Type.Optional(Type.Array(Image)),
            },
            { additionalProperties: false },
          ),
          priority: Type.Integer(),
          active: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    projects: Type.Array(
      Type.Object(
        {
          id: Uuid,
          impactPartnerId: Uuid,
          name: Type.String({ minLength: 1, maxLength: 200 }),
          shortDescription: Type.String({ maxLength: 1000 }),
          longDescription: Type.Optional(Type.Union([Type.String({ maxLength: 10000 }), Type.Null()])),
          type: Type.String({ minLength: 1, maxLength: 50 }),
          location: Type.Object(
            {
              countryCode: Type.Union([Type.String({ pattern: '^[A-Z]{3}$' }), Type.Null()]),
              state: Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()]),
            },
            { additionalProperties: false },
          ),
          price: DecimalText,
          priceCurrency: Type.String({ pattern: '^[A-Z]{3}$' }),
          priority: Type.Integer(),
          weight: Type.Union([DecimalText, Type.Null()]),
          active: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    organisationPartners: Type.Optional(
      Type.Array(
        Type.Object(
          {
            organisationId: Uuid,
            impactPartnerIds: Type.Array(Uuid),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
)

export type CatalogueFile = Static<typeof CatalogueFileSchema>

/** The illustrative demo catalogue in the import format. */
export function demoCatalogue(): CatalogueFile {
  return {
    $comment: 'ILLUSTRATIVE DEMO CATALOGUE: fictional partners, type-exemplar projects, indicative prices. Not live offerings.',
    impactPartners: DEMO_IMPACT_PARTNERS.map((p) => ({
      id: p.id,
      kind: p.kind,
      name: p.name,
      shortDescription: p.shortDescription,
      images: structuredClone(p.images) as CatalogueFile['impactPartners'][number]['images'],
      priority: p.priority,
      active: p.active,
    })),
    projects: DEMO_CREDIT_PROJECTS.map((p) => ({
      id: p.id,
      impactPartnerId: p.impactPartnerId,
      name: p.name,
      shortDescription: p.shortDescription,
      type: p.type,
      location: { ...p.location },
      price: p.price,
      priceCurrency: p.priceCurrency,
      priority: p.priority,
      weight: p.weight,
      active: p.active,
    })),
  }
}

export interface ImportSummary {
  impactPartners: number
  projects: number
  organisationPartners: number
}

export async function importCatalogue(db: Kysely<Database>, input: unknown, now: Date): Promise<ImportSummary> {
  const problems = [...Value.Errors(CatalogueFileSchema, input)].map((e) => `${e.path || '/'}: ${e.message}`)
  if (problems.length > 0) throw new ImportError(problems)
  const file = input as CatalogueFile
  const known = new Map((await findImpactPartners(db)).map((p) => [p.id, p.kind]))
  const fx = (await loadFxInUse(db)).table
  for (const partner of file.impactPartners) known.set(partner.id, partner.kind)
  const seen = new Set<string>()
  file.projects.forEach((project, i) => {
    const at = `/projects/${i}`
    if (seen.has(project.id)) problems.push(`${at}/id: duplicate project id ${project.id}`)
    seen.add(project.id)
    const kind = known.get(project.impactPartnerId)
    if (kind === undefined) problems.push(`${at}/impactPartnerId: unknown impact partner ${project.impactPartnerId}`)
    else if (kind !== 'credits') problems.push(`${at}/impactPartnerId: ${project.impactPartnerId} is a contribution partner`)
    if (!isPricedCurrency(project.priceCurrency, fx)) problems.push(`${at}/priceCurrency: unsupported currency ${project.priceCurrency}`)
    if (project.location.countryCode !== null && !isKnownCountry(project.location.countryCode)) {
      problems.push(`${at}/location/countryCode: unknown country ${project.location.countryCode}`)
    }
    if (project.location.countryCode === null && project.location.state !== null)
      problems.push(`${at}/location/state: a state needs a country`)
  })
  for (const [i, list] of (file.organisationPartners ?? []).entries()) {
    if (!(await findOrganisationById(db, list.organisationId)))
      problems.push(`/organisationPartners/${i}/organisationId: unknown organisation`)
    list.impactPartnerIds.forEach((id, j) => {
      if (!known.has(id)) problems.push(`/organisationPartners/${i}/impactPartnerIds/${j}: unknown impact partner ${id}`)
    })
  }
  if (problems.length > 0) throw new ImportError(problems)
  await db.transaction().execute(async (trx) => {
    await upsertImpactPartners(trx, file.impactPartners, now)
    await upsertProjects(trx, file.projects, now)
    await replaceOrganisationPartners(trx, file.organisationPartners ?? [])
  })
  return {
    impactPartners: file.impactPartners.length,
    projects: file.projects.length,
    organisationPartners: file.organisationPartners?.length ?? 0,
  }
}

const FACTOR_COLUMNS = [
  'id',
  'kind',
  'mccFrom',
  'mccTo',
  'region',
  'value',
  'baseCurrency',
  'priceYear',
  'source',
  'version',
  'licence',
] as const
const OPTIONAL_FACTOR_COLUMNS = ['tailpipeValue', 'note'] as const

/** Parses an emission-factor CSV (header row with the EmissionFactor field names); base currencies must be priced by `fx`. */
export function parseFactorCsv(text: string, fx: FxTable = REFERENCE_FX_RATES): EmissionFactor[] {
  let records: Record<string, string>[]
  try {
    records = parseCsv(text, { columns: true, skip_empty_lines: true, trim: true, bom: true }) as Record<string, string>[]
  } catch (error) {
    throw new ImportError([`not valid CSV: ${(error as Error).message}`])
  }
  const problems: string[] = []
  const header = Object.keys(records[0] ?? {})
  for (const column of FACTOR_COLUMNS) if (!header.includes(column)) problems.push(`missing column ${column}`)
  for (const column of header) {
    if (!(FACTOR_COLUMNS as readonly string[]).includes(column) && !(OPTIONAL_FACTOR_COLUMNS as readonly string[]).includes(column)) {
      problems.push(`unknown column ${column}`)
    }
  }
  if (records.length === 0) problems.push('no rows')
  if (problems.length > 0) throw new ImportError(problems)
  const decimal = /^(0|[1-9]\d{0,9})(\.\d{1,10})?$/
  const ids = new Set<string>()
  const factors = records.map((r, i) => {
    const line = `row ${i + 2}`
    const mccFrom = Number(r.mccFrom)
    const mccTo = Number(r.mccTo)
    const priceYear = Number(r.priceYear)
    const region = r.region ?? ''
    if (!r.id || r.id.length > 100) problems.push(`${line}: id is required (at most 100 characters)`)
    else if (ids.has(r.id)) problems.push(`${line}: duplicate id ${r.id}`)
    ids.add(r.id ?? '')
    if (r.kind !== 'carbon' && r.kind !== 'nature') problems.push(`${line}: kind must be carbon or nature`)
    if (!Number.isInteger(mccFrom) || !Number.isInteger(mccTo) || mccFrom < 0 || mccTo > 9999 || mccFrom > mccTo) {
      problems.push(`${line}: mccFrom/mccTo must be integers with 0 ≤ mccFrom ≤ mccTo ≤ 9999`)
    }
    if (region !== 'WORLD' && !isKnownCountry(region)) problems.push(`${line}: region must be WORLD or an ISO 3166-1 alpha-3 country`)
    if (!decimal.test(r.value ?? '')) problems.push(`${line}: value must be a non-negative decimal`)
    if (!isPricedCurrency(r.baseCurrency ?? '', fx)) problems.push(`${line}: unsupported baseCurrency ${r.baseCurrency}`)
    if (!Number.isInteger(priceYear) || priceYear < 1990 || priceYear > 2100) problems.push(`${line}: priceYear must be a year`)
    for (const field of ['source', 'version', 'licence'] as const) if (!r[field]) problems.push(`${line}: ${field} is required`)
    if (r.tailpipeValue && !decimal.test(r.tailpipeValue)) problems.push(`${line}: tailpipeValue must be a non-negative decimal`)
    return {
      id: r.id ?? '',
      kind: r.kind as 'carbon' | 'nature',
      mccFrom,
      mccTo,
      region,
      value: r.value ?? '0',
      baseCurrency: r.baseCurrency ?? '',
      priceYear,
      source: r.source ?? '',
      version: r.version ?? '',
      licence: r.licence ?? '',
      ...(r.tailpipeValue ? { tailpipeValue: r.tailpipeValue } : {}),
      ...(r.note ? { note: r.note } : {}),
    } satisfies EmissionFactor
  })
  if (problems.length > 0) throw new ImportError(problems)
  return factors
}

export async function importEmissionFactors(db: Kysely<Database>, csv: string, now: Date): Promise<{ factors: number }> {
  const factors = parseFactorCsv(csv, (await loadFxInUse(db)).table)
  await db.transaction().execute((trx) => upsertEmissionFactors(trx, factors, now))
  return { factors: factors.length }
}
