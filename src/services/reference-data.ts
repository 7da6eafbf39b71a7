// In-process cache of what pricing reads on every quote: the catalogue, imported emission factors and
// organisation settings. Entries live CATALOGUE_CACHE_TTL_MS; concurrent misses share one load.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findActiveProjects, findAllowedPartnerIds, findImpactPartners, findImportedFactors } from '../db/repositories/catalogue.js'
import { findOrganisationById } from '../db/repositories/organisations.js'
import { DEFAULT_EMISSION_FACTORS } from '../domain/data/emission-factors.js'
import { REFERENCE_FX_RATES } from '../domain/fx.js'
import type { ReferenceData } from '../domain/pricing.js'
import type { CreditProject, EmissionFactor, ImpactPartner } from '../domain/types.js'
import { notFound } from '../errors.js'

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
  factors: EmissionFactor[]
}

interface Entry<T> {
  value: Promise<T>
  expiresAt: number
}

export class ReferenceDataCache {
  private catalogue: Entry<Catalogue> | undefined
  private readonly organisations = new Map<string, Entry<{ settings: OrganisationSettings; allowed: ReadonlySet<string> | undefined }>>()

  constructor(private readonly db: Kysely<Database>, private readonly ttlMs: number, private readonly now: () => number) {}

  private fresh<T>(entry: Entry<T> | undefined): entry is Entry<T> {
    return entry !== undefined && entry.expiresAt > this.now()
  }

  private loadCatalogue(): Promise<Catalogue> {
    if (this.fresh(this.catalogue)) return this.catalogue.value
    const value = Promise.all([findImpactPartners(this.db), findActiveProjects(this.db), findImportedFactors(this.db)])
      .then(([partners, projects, imported]) => ({ partners, projects, factors: [...imported, ...DEFAULT_EMISSION_FACTORS] }))
    const entry = { value, expiresAt: this.now() + this.ttlMs }
    this.catalogue = entry
    value.catch(() => { if (this.catalogue === entry) this.catalogue = undefined })
    return value
  }

  private loadOrganisation(organisationId: string) {
    const cached = this.organisations.get(organisationId)
    if (this.fresh(cached)) return cached.value
    const value = Promise.all([findOrganisationById(this.db, organisationId), findAllowedPartnerIds(this.db, organisationId)])
      .then(([row, allowed]) => {
        if (!row) throw notFound('organisation')
        const settings: OrganisationSettings = {
          id: row.id,
          tradingName: row.trading_name,
          mcc: row.mcc,
          countryCode: row.address.countryCode,
          state: row.address.state ?? null,
          currencyCode: row.currency_code,
          serviceFeeRate: row.service_fee_rate,
          taxLiability: row.tax_liability,
        }
        return { settings, allowed: allowed ? new Set(allowed) : undefined }
      })
    const entry = { value, expiresAt: this.now() + this.ttlMs }
    if (this.organisations.size >= 10_000) this.organisations.clear()
    this.organisations.set(organisationId, entry)
    value.catch(() => { if (this.organisations.get(organisationId) === entry) this.organisations.delete(organisationId) })
    return value
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

  clear(): void {
    this.catalogue = undefined
    this.organisations.clear()
  }
}
