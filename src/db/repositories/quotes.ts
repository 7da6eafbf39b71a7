// Quotes: a locked quote is stored as one row plus its snapshot: the part many quotes share (partner details, priced
// projects, the provenance of the footprint and tax, and the rest of what quotes of one organisation, location,
// catalogue and locale lock alike: rates, partner ids, unit price, locale, the equivalents' sentences), stored once,
// content-addressed by the SHA-256 of its JSON. The row keeps only this quote's figures, by position
// (CompactLockedQuote in src/db/database.ts: footprint, amounts, the equivalents' values), and its request without
// what the row or a default says (StoredQuoteRequest). Every byte of the row is WAL (docs/write-costs.md). Rows written
// before keep the shape they were written in (LegacyLockedQuote, the full request) and read back the same.
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Equivalent, Footprint, LockedQuote } from '../../domain/types.js'
import type {
  CompactLockedQuote,
  Database,
  EquivalentTemplate,
  LegacyLockedQuote,
  NewQuoteRow,
  QuoteRequestRecord,
  QuoteRow,
  QuoteSnapshotBody,
  SharedLockedQuote,
  StoredLockedQuote,
  StoredEquivalentValue,
  StoredQuoteRequest,
} from '../database.js'

/** A stored quote: what was asked, what was locked, and for whom. Immutable once stored. */
export interface Quote {
  id: string
  organisationId: string
  impactType: 'carbon' | 'nature'
  currencyCode: string
  taxLiability: 'platform' | 'organisation'
  createdAt: Date
  request: QuoteRequestRecord
  locked: LockedQuote
}

export interface QuoteSnapshot {
  /** SHA-256 (hex) of `body`. */
  id: string
  /** JSON of QuoteSnapshotBody. */
  body: string
}

/** A number as an equivalent's description writes it: plain digits, or digits with separators ("1,234", "0,5"). */
const NUMBER_IN_TEXT = /\d(?:[\d.,'\u00a0\u202f]*\d)?/

/**
 * An equivalent split into its template (shared by the quotes that say the same sentence) and what this quote adds: its
 * value, with the number's text when the description does not write it as String(value). Any split gives the
 * description back exactly (before + text + after); looking for the value's digits only makes templates shared.
 */
function splitEquivalent(equivalent: Equivalent): { template: EquivalentTemplate; value: StoredEquivalentValue } {
  const { key, value, description } = equivalent
  const plain = String(value)
  let at = description.indexOf(plain)
  let text = plain
  if (at < 0) {
    const found = NUMBER_IN_TEXT.exec(description)
    if (found === null) return { template: [key, description], value }
    at = found.index
    text = found[0]
  }
  return {
    template: [key, description.slice(0, at), description.slice(at + text.length)],
    value: text === plain ? value : [value, text],
  }
}

/** The equivalent a template and a stored value give back: the very sentence that was locked. */
function joinEquivalent(template: EquivalentTemplate, stored: StoredEquivalentValue): Equivalent {
  const [value, text] = typeof stored === 'number' ? [stored, String(stored)] : stored
  const description = template.length === 3 ? template[1] + text + template[2] : template[1]
  return { key: template[0], value, description }
}

/** What the quotes of one snapshot lock alike: everything but this quote's footprint, amounts and equivalents' values. */
function sharedOf(locked: LockedQuote, templates: EquivalentTemplate[]): SharedLockedQuote {
  const credits = locked.credits
  return {
    impactType: locked.impactType,
    currencyCode: locked.currencyCode,
    minorUnits: locked.minorUnits,
    locale: locked.locale,
    footprintKind: locked.footprint.kind,
    equivalents: templates,
    credits: credits
      ? {
          taxRates: credits.taxRates,
          unit: credits.unit,
          consumerLocationMatchAccuracy: credits.consumerLocationMatchAccuracy,
          impactPartnerIds: credits.impactPartnerIds,
        }
      : null,
    contribution: locked.contribution,
  }
}

/** What a snapshot is made of besides the equivalents' templates and the provenance, as values and objects (compared by identity). */
function sourcesOf(locked: LockedQuote, projects: QuoteSnapshotBody['projects']): readonly unknown[] {
  const credits = locked.credits
  return [
    locked.partners,
    projects,
    locked.impactType,
    locked.currencyCode,
    locked.minorUnits,
    locked.locale,
    locked.footprint.kind,
    credits?.taxRates,
    credits?.unit,
    credits?.consumerLocationMatchAccuracy,
    credits?.impactPartnerIds,
    locked.contribution,
  ]
}

const NO_PROJECTS: QuoteSnapshotBody['projects'] = Object.freeze([]) as unknown as QuoteSnapshotBody['projects']

/** The snapshots made from one provenance object, with the other sources they were made with (sourcesOf). */
interface SnapshotsOf {
  sources: readonly unknown[]
  /** By the equivalents' templates, joined (the rest of `shared` is the same for every snapshot here). */
  byTemplates: Map<string, QuoteSnapshot>
}

/**
 * Quotes priced from one plan share their provenance, partners, projects and every other object of `shared`
 * (src/domain/pricing.ts, QuotePlan), and their snapshots differ at most in the equivalents' templates (a template
 * follows its number's plural). So a snapshot is kept by its provenance object (weakly: gone with the plan's quotes),
 * checked against the objects it was made from, and by its templates: the ~5 KB body is serialised and hashed once,
 * not per quote. Locked quotes are never mutated (src/domain/pricing.ts), so the same objects always give the same body.
 */
const snapshotsByProvenance = new WeakMap<LockedQuote['provenance'], SnapshotsOf>()
/** Distinct templates kept per provenance object; past it, snapshots are made without keeping them. */
const TEMPLATES_PER_PROVENANCE_MAX = 64

const sameSources = (a: readonly unknown[], b: readonly unknown[]): boolean => a.every((value, i) => value === b[i])

/** A locked quote's equivalents split into their templates and values (splitEquivalent), once per quote stored. */
interface SplitEquivalents {
  templates: EquivalentTemplate[]
  values: StoredEquivalentValue[]
}

function splitEquivalents(locked: LockedQuote): SplitEquivalents {
  const templates: EquivalentTemplate[] = []
  const values: StoredEquivalentValue[] = []
  for (const equivalent of locked.equivalents) {
    const { template, value } = splitEquivalent(equivalent)
    templates.push(template)
    values.push(value)
  }
  return { templates, values }
}

/** The shared part of a locked quote, as stored in quote_snapshots. */
export function snapshotOf(locked: LockedQuote, split: SplitEquivalents = splitEquivalents(locked)): QuoteSnapshot {
  const projects = locked.credits?.projects ?? NO_PROJECTS
  const { templates } = split
  // "\u0000" and "\u0001" are in no sentence: the key gives the templates back.
  const key = templates.map((template) => template.join('\u0000')).join('\u0001')
  const sources = sourcesOf(locked, projects)
  let kept = snapshotsByProvenance.get(locked.provenance)
  if (kept === undefined || !sameSources(kept.sources, sources)) {
    kept = { sources, byTemplates: new Map() }
    snapshotsByProvenance.set(locked.provenance, kept)
  }
  const hit = kept.byTemplates.get(key)
  if (hit !== undefined) return hit
  const shared = sharedOf(locked, templates)
  const body = JSON.stringify({ partners: locked.partners, projects, provenance: locked.provenance, shared } satisfies QuoteSnapshotBody)
  const snapshot = { id: createHash('sha256').update(body).digest('hex'), body }
  if (kept.byTemplates.size < TEMPLATES_PER_PROVENANCE_MAX) kept.byTemplates.set(key, snapshot)
  return snapshot
}

/** quotes.locked: what only this quote locked (the rest is in its snapshot). */
function compactLocked(locked: LockedQuote, values: StoredEquivalentValue[]): CompactLockedQuote {
  const { footprint, credits } = locked
  const amounts = credits?.amounts
  return [
    footprint.kind === 'carbon' ? [footprint.co2eGrams, footprint.co2eOunces] : [footprint.areaSquareMetres, footprint.areaSquareFeet],
    amounts ? [amounts.total, amounts.impact, amounts.impactTax, amounts.serviceFee, amounts.serviceFeeTax] : null,
    values,
  ]
}

/** The whole locked quote again, from a compact row and its snapshot. */
function joinCompact(stored: CompactLockedQuote, snapshot: QuoteSnapshotBody | null): LockedQuote {
  const shared = snapshot?.shared
  if (!snapshot?.provenance || !shared) throw new Error('compact stored quote without its snapshot')
  const [[first, second], amounts, values] = stored
  if (values.length !== shared.equivalents.length || (amounts === null) !== (shared.credits === null)) {
    throw new Error('compact stored quote does not match its snapshot')
  }
  const footprint: Footprint =
    shared.footprintKind === 'carbon'
      ? { kind: 'carbon', co2eGrams: first, co2eOunces: second }
      : { kind: 'nature', areaSquareMetres: first, areaSquareFeet: second }
  const { credits } = shared
  return {
    impactType: shared.impactType,
    currencyCode: shared.currencyCode,
    minorUnits: shared.minorUnits,
    locale: shared.locale,
    footprint,
    equivalents: shared.equivalents.map((template, i) => joinEquivalent(template, values[i] as StoredEquivalentValue)),
    provenance: snapshot.provenance,
    ...(credits && amounts
      ? {
          credits: {
            taxRates: credits.taxRates,
            amounts: { total: amounts[0], impact: amounts[1], impactTax: amounts[2], serviceFee: amounts[3], serviceFeeTax: amounts[4] },
            unit: credits.unit,
            consumerLocationMatchAccuracy: credits.consumerLocationMatchAccuracy,
            projects: snapshot.projects,
            impactPartnerIds: credits.impactPartnerIds,
          },
        }
      : {}),
    contribution: shared.contribution,
    partners: snapshot.partners,
  }
}

/** The whole locked quote again, from a row written before compact quotes (it carries inline what it did not share). */
function joinLegacy(stored: LegacyLockedQuote, snapshot: QuoteSnapshotBody | null): LockedQuote {
  const { credits, provenance, ...rest } = stored
  const shared = snapshot?.provenance ?? provenance
  if (shared === undefined) throw new Error('stored quote has no provenance inline or in its snapshot')
  return {
    ...rest,
    provenance: shared,
    partners: snapshot?.partners ?? stored.partners ?? [],
    ...(credits ? { credits: { ...credits, projects: snapshot?.projects ?? credits.projects ?? [] } } : {}),
  }
}

function joinSnapshot(stored: StoredLockedQuote, snapshot: QuoteSnapshotBody | null): LockedQuote {
  return Array.isArray(stored) ? joinCompact(stored, snapshot) : joinLegacy(stored, snapshot)
}

/** quotes.request: the request without what the row or a default says (StoredQuoteRequest). */
function storedRequest(request: QuoteRequestRecord, organisationId: string): StoredQuoteRequest {
  const { includeImpactPartnerDetails, includeImpactPartnerRates, ...otherOptions } = request.responseOptions
  const defaultOptions = !includeImpactPartnerDetails && !includeImpactPartnerRates && Object.keys(otherOptions).length === 0
  // undefined drops the field from the JSON; the others keep the request's order.
  return {
    ...request,
    organisationId: request.organisationId === organisationId ? undefined : request.organisationId,
    matchConsumerLocation: request.matchConsumerLocation === false ? undefined : request.matchConsumerLocation,
    responseOptions: defaultOptions ? undefined : request.responseOptions,
  }
}

/** The quote request again: what the stored one leaves out is the row's organisation or the field's default. */
function requestFromRow(stored: StoredQuoteRequest, organisationId: string): QuoteRequestRecord {
  const {
    organisationId: own = organisationId,
    locale,
    consumer,
    merchant,
    transaction,
    orderItems,
    matchConsumerLocation = false,
    responseOptions = { includeImpactPartnerDetails: false, includeImpactPartnerRates: false },
    origin,
    ...others
  } = stored
  // In the order the request is built in (src/http/schemas/quotes.ts, toQuoteRequest); optional fields only when stored.
  return {
    organisationId: own,
    ...('locale' in stored ? { locale } : {}),
    consumer,
    ...('merchant' in stored ? { merchant } : {}),
    transaction,
    ...('orderItems' in stored ? { orderItems } : {}),
    matchConsumerLocation,
    responseOptions,
    origin,
    ...others,
  }
}

export function quoteToRow(quote: Quote, snapshotId: string, split: SplitEquivalents = splitEquivalents(quote.locked)): NewQuoteRow {
  return {
    id: quote.id,
    organisation_id: quote.organisationId,
    impact_type: quote.impactType,
    currency_code: quote.currencyCode,
    tax_liability: quote.taxLiability,
    request: JSON.stringify(storedRequest(quote.request, quote.organisationId)),
    locked: JSON.stringify(compactLocked(quote.locked, split.values)),
    snapshot_id: snapshotId,
    created_at: quote.createdAt,
  }
}

export function quoteFromRow(row: QuoteRow, snapshot: QuoteSnapshotBody | null): Quote {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    impactType: row.impact_type,
    currencyCode: row.currency_code,
    taxLiability: row.tax_liability,
    createdAt: row.created_at,
    request: requestFromRow(row.request, row.organisation_id),
    locked: joinSnapshot(row.locked, snapshot),
  }
}

/** Rows for `quotes`, and the distinct snapshots among them that `isStored` does not already know. */
export function quoteRows(
  quotes: readonly Quote[],
  isStored: (snapshotId: string) => boolean,
): { rows: NewQuoteRow[]; snapshots: QuoteSnapshot[] } {
  const snapshots = new Map<string, QuoteSnapshot>()
  const rows = quotes.map((quote) => {
    const split = splitEquivalents(quote.locked)
    const snapshot = snapshotOf(quote.locked, split)
    if (!isStored(snapshot.id)) snapshots.set(snapshot.id, snapshot)
    return quoteToRow(quote, snapshot.id, split)
  })
  return { rows, snapshots: [...snapshots.values()] }
}

export async function findQuoteById(db: Kysely<Database>, id: string): Promise<Quote | undefined> {
  // quotes first; an allocated quote of a month retention dropped lives on in retained_quotes (docs/partitioning.md).
  const read = (table: 'quotes' | 'retained_quotes') =>
    db
      .selectFrom(`${table} as q`)
      .leftJoin('quote_snapshots', 'quote_snapshots.id', 'q.snapshot_id')
      .selectAll('q')
      .select('quote_snapshots.body as snapshot')
      .where('q.id', '=', id)
      .executeTakeFirst()
  const found = (await read('quotes')) ?? (await read('retained_quotes'))
  if (!found) return undefined
  const { snapshot, ...row } = found
  return quoteFromRow(row, snapshot)
}
