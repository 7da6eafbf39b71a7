// Plain data shapes of the pricing domain. Decimal values are carried as decimal strings
// (e.g. "12.60", "0.1666666666666666666666666666666666666667") so that a locked quote can be stored
// as JSON and read back without loss; arithmetic converts them to Decimal inside src/domain only.

/** A decimal number written as a string, never a JS float. */
export type DecimalString = string

export type ImpactType = 'carbon' | 'nature'
export type TaxLiability = 'platform' | 'organisation'
export type LocationMatchAccuracy = 'state' | 'country' | 'global'

export interface ConsumerLocation {
  /** ISO 3166-1 alpha-3, upper case. */
  readonly countryCode: string
  readonly state?: string | undefined
  readonly postalCode?: string | undefined
  readonly city?: string | undefined
}

export interface MerchantLocation {
  /** ISO 3166-1 alpha-3, upper case. */
  readonly countryCode: string
  readonly state?: string | undefined
}

/** One spend-based emission (carbon) or biodiversity (nature) factor. */
export interface EmissionFactor {
  readonly id: string
  readonly kind: ImpactType
  /** Inclusive MCC range; a single MCC has mccFrom === mccTo. */
  readonly mccFrom: number
  readonly mccTo: number
  /** ISO 3166-1 alpha-3 country, or 'WORLD'. */
  readonly region: string
  /** carbon: kg CO2e per unit of baseCurrency; nature: m² of intact nature lost (MSA) per unit. */
  readonly value: DecimalString
  readonly baseCurrency: string
  readonly priceYear: number
  readonly source: string
  readonly version: string
  readonly licence: string
  /** Extra kg CO2 per unit of baseCurrency burnt at the tailpipe (fuel MCCs only). */
  readonly tailpipeValue?: DecimalString | undefined
  readonly note?: string | undefined
}

export interface PartnerImage {
  readonly path: string
  readonly type: string
  readonly width: number
  readonly height: number
}

export interface PartnerImages {
  readonly logos?: readonly PartnerImage[]
  readonly thumbnails?: readonly PartnerImage[]
  readonly backgrounds?: readonly PartnerImage[]
}

export interface ImpactPartner {
  readonly id: string
  readonly kind: 'credits' | 'contribution'
  readonly name: string
  readonly shortDescription: string
  readonly images: PartnerImages
  /** Higher comes first; ties broken by id. */
  readonly priority: number
  readonly active: boolean
}

export interface CreditProject {
  readonly id: string
  readonly impactPartnerId: string
  readonly name: string
  readonly shortDescription: string
  /** ekko's project type, e.g. "carbonCredits". */
  readonly type: string
  /** countryCode null = a project with no location (global). */
  readonly location: { readonly countryCode: string | null; readonly state: string | null }
  /** Price per tCO2e in priceCurrency. */
  readonly price: DecimalString
  readonly priceCurrency: string
  /** Higher comes first; ties broken by id. */
  readonly priority: number
  /** Relative weight inside a portfolio; null = equal weights. */
  readonly weight: DecimalString | null
  readonly active: boolean
}

/** Reference FX rates: units of currency per 1 unit of base (ECB: base EUR). */
export interface FxTable {
  readonly base: string
  readonly date: string
  readonly source: string
  readonly rates: Readonly<Record<string, DecimalString>>
}

/** The three tax rates applied to one section of a quote. */
export interface SectionTaxRates {
  /** ti: tax on the impact amount (proportion). */
  readonly impactTax: DecimalString
  /** f: service fee as a proportion of impact. */
  readonly serviceFee: DecimalString
  /** tf: tax on the service fee (proportion). */
  readonly serviceFeeTax: DecimalString
}

export interface EffectiveRates {
  readonly impact: DecimalString
  readonly impactTax: DecimalString
  readonly serviceFee: DecimalString
  readonly serviceFeeTax: DecimalString
}

export interface CreditAmounts {
  readonly total: DecimalString
  readonly impact: DecimalString
  readonly impactTax: DecimalString
  readonly serviceFee: DecimalString
  readonly serviceFeeTax: DecimalString
}

export interface Equivalent {
  readonly key: string
  readonly value: number
  readonly description: string
}

export interface CarbonFootprint {
  readonly kind: 'carbon'
  readonly co2eGrams: DecimalString
  readonly co2eOunces: DecimalString
}

export interface NatureFootprint {
  readonly kind: 'nature'
  readonly areaSquareMetres: DecimalString
  readonly areaSquareFeet: DecimalString
}

export type Footprint = CarbonFootprint | NatureFootprint

/** A project priced in a quote, with its price converted to the quote currency and its locked weight. */
export interface QuotedProject {
  readonly id: string
  readonly impactPartnerId: string
  readonly name: string
  readonly shortDescription: string
  readonly type: string
  readonly location: { readonly countryCode: string | null; readonly state: string | null }
  /** Price per tCO2e in the quote currency, rounded half-up to its minor units. */
  readonly unitPrice: DecimalString
  /** Original catalogue price and currency, kept for audit. */
  readonly catalogue: { readonly price: DecimalString; readonly currencyCode: string }
  /** Raw locked weight; the split uses these. */
  readonly weight: DecimalString
  /** weight / Σweights, rounded to 10 decimals, for display. */
  readonly weightShare: DecimalString
  /**
   * The rate that converted the catalogue price into the quote currency (full precision, as used), its date and
   * source. Absent from quotes priced before it was locked (GET /quotes/:id/explain says so).
   */
  readonly fx?: { readonly rate: DecimalString; readonly date: string; readonly source: string } | undefined
}

/** The price-year adjustment of a USD factor: US CPI-U of the factor's price year over that of the quote's year. */
export interface DeflatorBasis {
  readonly series: string
  readonly priceYear: number
  readonly priceYearIndex: DecimalString
  /** The quote's year, clamped to the verified CPI years. */
  readonly year: number
  readonly yearIndex: DecimalString
}

/** A tax rate a quote applied and the rule that gave it, in words. */
export interface TaxRateApplied {
  readonly rate: DecimalString
  readonly rule: string
}

export interface PartnerRates {
  readonly partnerId: string
  readonly rates: EffectiveRates
}

export interface TaxJurisdiction {
  /** alpha-2 country used for the rate lookup, e.g. "CA". */
  readonly country: string
  readonly state: string | null
  /** Which location decided it. */
  readonly basis: 'consumer' | 'merchant'
}

/**
 * Everything a stored quote needs to reproduce its response and to allocate against it
 * without recomputation (docs/pricing.md). Plain JSON data.
 */
export interface LockedQuote {
  readonly impactType: ImpactType
  readonly currencyCode: string
  readonly minorUnits: number
  /** The locale actually used after fallback, e.g. "en-GB". */
  readonly locale: string
  readonly footprint: Footprint
  readonly equivalents: readonly Equivalent[]
  readonly provenance: {
    readonly factor: {
      readonly id: string
      readonly source: string
      readonly version: string
      readonly region: string
      readonly mcc: string
      readonly matchedBy: 'mcc-country' | 'mcc-world' | 'mcc-range' | 'default'
      readonly value: DecimalString
      /** Extra kg CO2 per unit of baseCurrency from burning fuel (fuel MCCs only; added). */
      readonly tailpipeValue?: DecimalString | undefined
      readonly baseCurrency: string
      readonly priceYear: number
    }
    /** Amount converted into the factor's base currency. */
    readonly fx: {
      readonly from: string
      readonly to: string
      readonly rate: DecimalString
      readonly date: string
      readonly source: string
    }
    /** Price-year adjustment applied to the spend (1 when none). */
    readonly deflator: DecimalString
    /** What the deflator is made of (null: none applied). Absent from quotes priced before it was locked. */
    readonly deflatorBasis?: DeflatorBasis | null | undefined
    /** The merchant country the factor was looked up for (alpha-3). Absent from quotes priced before it was locked. */
    readonly merchantCountryCode?: string | undefined
    readonly tax: {
      readonly ruleSetVersion: string
      readonly effectiveDate: string
      readonly jurisdiction: TaxJurisdiction
      /** The rate data the rules read. Absent from quotes priced before it was locked. */
      readonly rateSource?: string | undefined
      /** Each line's rate and rule on the quote's date. Absent from quotes priced before it was locked. */
      readonly lines?:
        | {
            readonly creditImpact: TaxRateApplied
            readonly contributionImpact: TaxRateApplied
            readonly serviceFee: TaxRateApplied
          }
        | undefined
    }
  }
  /** Present for carbon quotes only. */
  readonly credits?: {
    readonly taxRates: SectionTaxRates
    readonly amounts: CreditAmounts
    readonly unit: { readonly description: 'tCO2e'; readonly price: DecimalString }
    readonly consumerLocationMatchAccuracy: LocationMatchAccuracy
    readonly projects: readonly QuotedProject[]
    /** Partner ids of the projects, in project order, without duplicates. */
    readonly impactPartnerIds: readonly string[]
  }
  readonly contribution: {
    readonly taxRates: SectionTaxRates
    readonly impactPartnerIds: readonly string[]
  }
  /** Details of every partner referenced above, frozen at quote time. */
  readonly partners: readonly {
    readonly id: string
    readonly name: string
    readonly shortDescription: string
    readonly images: PartnerImages
  }[]
}

/** One line of an allocation (docs/api-contract.md, "Funds allocations"). Amounts are decimal strings in the quote currency. */
export interface AllocationEntryAmounts {
  readonly impactAmount: DecimalString
  readonly impactSalesTaxAmount: DecimalString
  readonly impactSalesTaxRate: DecimalString
  readonly serviceFeeAmount: DecimalString
  readonly serviceFeeSalesTaxAmount: DecimalString
  readonly serviceFeeSalesTaxRate: DecimalString
}

export interface CreditAllocationEntry extends AllocationEntryAmounts {
  readonly projectId: string
  readonly impactPartnerId: string
  /** tCO2e bought for this project: impactAmount / unit price, 6 decimals. */
  readonly quantityTonnes: DecimalString
}

export interface ContributionAllocationEntry extends AllocationEntryAmounts {
  readonly impactPartnerId: string
}

export interface AllocationSplit {
  readonly currencyCode: string
  readonly credits: readonly CreditAllocationEntry[]
  readonly contributions: readonly ContributionAllocationEntry[]
}
