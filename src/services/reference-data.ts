// In-process cache of what pricing reads on every quote: the catalogue, imported emission factors, the exchange
// rates in use and organisation settings. Entries live CATALOGUE_CACHE_TTL_MS; concurrent misses share one load.
import type { Kysely } from 'kysely'
import type { AddressJson, Database } from '../db/database.js'
import { findActiveProjects, findAllowedPartnerIds, findImpactPartners, findImportedFactors } from '../db/repositories/catalogue.js'
import { findOrganisationById, findOrganisationChain } from '../db/repositories/organisations.js'
import {
  beneficiaryJurisdiction,
  DEFAULT_SETTLEMENT_MODEL,
  type ProfitShareBeneficiary,
  type SettlementModel,
} from '../domain/profit-share.js'
import { DEFAULT_EMISSION_FACTORS } from '../domain/data/emission-factors.js'
import { indexFactors, type FactorSet } from '../domain/footprint.js'
import type { ReferenceData } from '../domain/pricing.js'
import type { CreditProject, FxTable, ImpactPartner } from '../domain/types.js'
import { notFound } from '../errors.js'
import { createLoadingCache, type LoadingCache } from './cache.js'
import { loadFxInUse, type FxInUse } from './fx.js'
import { QuotePlans } from './quote-plans.js'

export interface OrganisationSettings {
  id: string
  tradingName: string
  /** The operator's own reference for the organisation (reconciliation records carry it). */
  organisationReference: string | null
  address: AddressJson
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

/** What pricing reads of one organisation: its settings, and the catalogue narrowed to its partners. */
export interface OrganisationReferenceData {
  settings: OrganisationSettings
  reference: ReferenceData
}

/** The pricing inputs of one organisation, and the loaded catalogue and FX table they were made from. */
interface OrganisationReference {
  catalogue: Catalogue
  fx: FxTable
  reference: ReferenceData
}

/** Quote plans kept (src/services/quote-plans.ts): far more than the contexts an API process prices in a few seconds. */
const QUOTE_PLANS_MAX = 1_000

/** What an allocation's profit share reads of its organisation's chain, root first. */
export interface ProfitShareChain {
  settlementModel: SettlementModel
  beneficiaries: ProfitShareBeneficiary[]
  /** False when no organisation of the chain has a share: the allocation then stores no profit share at all. */
  anyShare: boolean
}

export class ReferenceDataCache {
  // Concurrent misses share one load, a failed load is forgotten at once, and an entry read past half its TTL is
  // loaded again in the background (src/services/cache.ts, createLoadingCache).
  private readonly catalogue: LoadingCache<Catalogue>
  private readonly organisations: LoadingCache<OrganisationEntry>
  private readonly fx: LoadingCache<FxInUse>
  private readonly chains: LoadingCache<ProfitShareChain>
  private lastFx: FxInUse | undefined
  /** By the loaded organisation entry: one ReferenceData object for as long as its entry, catalogue and FX table stay. */
  private readonly references = new WeakMap<OrganisationEntry, OrganisationReference>()
  /** Quote plans, each used only with the ReferenceData object it was made from (forOrganisation). */
  readonly plans = new QuotePlans(QUOTE_PLANS_MAX)

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs: number,
    now: () => number,
  ) {
    this.catalogue = createLoadingCache({ max: 1, ttlMs, now })
    this.organisations = createLoadingCache({ max: 10_000, ttlMs, now })
    this.fx = createLoadingCache({ max: 1, ttlMs, now })
    this.chains = createLoadingCache({ max: 10_000, ttlMs, now })
  }

  private readonly readCatalogue = (): Promise<Catalogue> =>
    Promise.all([findImpactPartners(this.db), findActiveProjects(this.db), findImportedFactors(this.db)]).then(
      ([partners, projects, imported]) => ({ partners, projects, factors: indexFactors([...imported, ...DEFAULT_EMISSION_FACTORS]) }),
    )

  private readonly readFx = async (): Promise<FxInUse> => {
    this.lastFx = await loadFxInUse(this.db, this.lastFx)
    return this.lastFx
  }

  private loadCatalogue(): Promise<Catalogue> {
    return this.catalogue.get('catalogue', this.readCatalogue)
  }

  /** The exchange rates new quotes use (the latest imported, or the compiled default), and their origin. */
  fxInUse(): Promise<FxInUse> {
    return this.fx.get('fx', this.readFx)
  }

  private loadOrganisation(organisationId: string): Promise<OrganisationEntry> {
    return this.organisations.get(organisationId, this.readOrganisation(organisationId))
  }

  private readOrganisation(organisationId: string): () => Promise<OrganisationEntry> {
    return () =>
      Promise.all([findOrganisationById(this.db, organisationId), findAllowedPartnerIds(this.db, organisationId)]).then(
        ([row, allowed]) => {
          if (!row) throw notFound('organisation')
          const settings: OrganisationSettings = {
            id: row.id,
            tradingName: row.tradingName,
            organisationReference: row.organisationReference,
            address: row.address,
            mcc: row.mcc,
            countryCode: row.address.countryCode,
            state: row.address.state ?? null,
            currencyCode: row.currencyCode,
            serviceFeeRate: row.serviceFeeRate,
            taxLiability: row.taxLiability,
          }
          return { settings, allowed: allowed ? new Set(allowed) : undefined }
        },
      )
  }

  /**
   * The profit-share settings of an organisation's chain (one recursive read, cached like the settings): a change
   * made in this process is seen at once (forgetProfitShareChains), one made in another within the cache's TTL.
   */
  profitShareChain(organisationId: string): Promise<ProfitShareChain> {
    return this.chains.get(organisationId, this.readProfitShareChain(organisationId))
  }

  private readProfitShareChain(organisationId: string): () => Promise<ProfitShareChain> {
    return async () => {
      const chain = await findOrganisationChain(this.db, organisationId)
      if (chain.length === 0) throw notFound('organisation')
      return {
        settlementModel: chain[0]?.settlementModel ?? DEFAULT_SETTLEMENT_MODEL,
        beneficiaries: chain.map((o) => ({
          relativeProfitShare: o.relativeProfitShare,
          billingCurrencyCode: o.billing?.currencyCode ?? o.currencyCode,
          taxJurisdiction: o.billing
            ? beneficiaryJurisdiction(o.billing.countryCode, o.billing.state)
            : beneficiaryJurisdiction(o.address.countryCode, o.address.state),
        })),
        anyShare: chain.some((o) => o.relativeProfitShare !== '0'),
      }
    }
  }

  /** profitShareChain's answer when it is cached, without a promise; undefined when it takes a read. */
  cachedProfitShareChain(organisationId: string): ProfitShareChain | undefined {
    return this.chains.getLoaded(organisationId, this.readProfitShareChain(organisationId))
  }

  /** fxInUse's answer when it is cached, without a promise; undefined when it takes a read. */
  cachedFxInUse(): FxInUse | undefined {
    return this.fx.getLoaded('fx', this.readFx)
  }

  /** Every cached chain: a share or billing detail changed (it affects every descendant's chain). */
  forgetProfitShareChains(): void {
    this.chains.clear()
  }

  async organisationSettings(organisationId: string): Promise<OrganisationSettings> {
    return (await this.loadOrganisation(organisationId)).settings
  }

  /**
   * Pricing inputs for one organisation: its settings, and the catalogue narrowed to its partners. The same
   * ReferenceData object comes back for as long as the organisation's settings, the catalogue and the FX table are
   * the ones loaded (within the cache's TTL), and a new object once any of them is loaded again: quote plans are kept
   * by it (src/services/quote-plans.ts).
   */
  async forOrganisation(organisationId: string): Promise<OrganisationReferenceData> {
    const [entry, catalogue, fx] = await Promise.all([this.loadOrganisation(organisationId), this.loadCatalogue(), this.fxInUse()])
    return this.referenceOf(entry, catalogue, fx)
  }

  /** forOrganisation's answer when the organisation, the catalogue and the FX table are all cached; else undefined. */
  cachedForOrganisation(organisationId: string): OrganisationReferenceData | undefined {
    const entry = this.organisations.getLoaded(organisationId, this.readOrganisation(organisationId))
    const catalogue = this.catalogue.getLoaded('catalogue', this.readCatalogue)
    const fx = this.fx.getLoaded('fx', this.readFx)
    return entry && catalogue && fx && this.referenceOf(entry, catalogue, fx)
  }

  private referenceOf(entry: OrganisationEntry, catalogue: Catalogue, fx: FxInUse): OrganisationReferenceData {
    let kept = this.references.get(entry)
    if (kept === undefined || kept.catalogue !== catalogue || kept.fx !== fx.table) {
      const { allowed } = entry
      const partners = allowed ? catalogue.partners.filter((p) => allowed.has(p.id)) : catalogue.partners
      kept = { catalogue, fx: fx.table, reference: { factors: catalogue.factors, fx: fx.table, partners, projects: catalogue.projects } }
      this.references.set(entry, kept)
    }
    return { settings: entry.settings, reference: kept.reference }
  }
}
