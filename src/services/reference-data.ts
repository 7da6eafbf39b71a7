// In-process cache of what pricing reads on every quote: the catalogue, imported emission factors and
// organisation settings. Entries live CATALOGUE_CACHE_TTL_MS; concurrent misses share one load.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findActiveProjects, findAllowedPartnerIds, findImpactPartners, findImportedFactors } from '../db/repositories/catalogue.js'
import { findOrganisationById } from '../db/repositories/organisations.js'
import { DEFAULT_EMISSION_FACTORS } from '../domain/data/emission-factors.js'
import { indexFactors, type FactorSet } from '../domain/footprint.js'
import { REFERENCE_FX_RATES } from '../domain/fx.js'
import type { ReferenceData } from '../domain/pricing.js'
import type { CreditProject, ImpactPartner } from '../domain/types.js'
import { notFound } from '../errors.js'
import { createCache, type Cache } from './cache.js'

export interface OrganisationSettings {
  id: string
  tradingName: string
  mcc: string | null
  countryCode: string
  state: string | null
  currencyCode: string
  serviceFeeRate: string
  taxLiability: 'platform' | 'organisation'
}

interface Catalogue {
  partners: ImpactPartner[]
  projects: CreditProject[]
  factors: FactorSet
}

type OrganisationEntry = { settings: OrganisationSettings; allowed: ReadonlySet<string> | undefined }

export class ReferenceDataCache {
  // Promises are cached, so concurrent misses share one load; a failed load is forgotten at once.
  private readonly catalogue: Cache<Promise<Catalogue>>
  private readonly organisations: Cache<Promise<OrganisationEntry>>

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs: number,
    now: () => number,
  ) {
    this.catalogue = createCache({ max: 1, ttlMs, now })
    this.organisations = createCache({ max: 10_000, ttlMs, now })
  }

  private cached<T>(cache: Cache<Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = cache.get(key)
    if (hit) return hit
    const value = load()
    cache.set(key, value)
    value.catch(() => {
      if (cache.get(key) === value) cache.delete(key)
    })
    return value
  }

  private loadCatalogue(): Promise<Catalogue> {
    return this.cached(this.catalogue, 'catalogue', () =>
      Promise.all([findImpactPartners(this.db), findActiveProjects(this.db), findImportedFactors(this.db)]).then(
        ([partners, projects, imported]) => ({ partners, projects, factors: indexFactors([...imported, ...DEFAULT_EMISSION_FACTORS]) }),
      ),
    )
  }

  private loadOrganisation(organisationId: string): Promise<OrganisationEntry> {
    return this.cached(this.organisations, organisationId, () =>
      Promise.all([findOrganisationById(this.db, organisationId), findAllowedPartnerIds(this.db, organisationId)]).then(
        ([row, allowed]) => {
          if (!row) throw notFound('organisation')
          const settings: OrganisationSettings = {
            id: row.id,
            tradingName: row.tradingName,
            mcc: row.mcc,
            countryCode: row.address.countryCode,
            state: row.address.state ?? null,
            currencyCode: row.currencyCode,
            serviceFeeRate: row.serviceFeeRate,
            taxLiability: row.taxLiability,
          }
          return { settings, allowed: allowed ? new Set(allowed) : undefined }
        },
      ),
    )
  }

  async organisationSettings(organisationId: string): Promise<OrganisationSettings> {
    return (await this.loadOrganisation(organisationId)).settings
  }

  /** Pricing inputs for one organisation: its settings, and the catalogue narrowed to its partners. */
  async forOrganisation(organisationId: string): Promise<{ settings: OrganisationSettings; reference: ReferenceData }> {
    const [{ settings, allowed }, catalogue] = await Promise.all([this.loadOrganisation(organisationId), this.loadCatalogue()])
    const partners = allowed ? catalogue.partners.filter((p) => allowed.has(p.id)) : catalogue.partners
    return { settings, reference: { factors: catalogue.factors, fx: REFERENCE_FX_RATES, partners, projects: catalogue.projects } }
  }
}
