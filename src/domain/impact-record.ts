// Impact reconciliation records (docs/reconciliation.md): what finance teams close their books from, one record per
// allocation and one per reversal. Built from what an allocation already holds (its split, the quote's consumer
// reference and merchant, the organisation), so the write path can build the very record the read path returns.
// Amounts are exact decimal strings at the currency's precision; the presenter turns them into JSON numbers.
import type { AllocationEntryAmounts, AllocationSplit } from './types.js'
import { Decimal, formatMinorUnits, minorUnitsOf, parseDecimal, toMinorUnits } from './money.js'

/** Amounts of a record or of one of its lines: decimal strings at the currency's minor units. */
export interface ImpactAmounts {
  total: string
  impact: string
  impactTax: string
  serviceFee: string
  serviceFeeTax: string
}

/** A line's amounts, with the tax rates the line was split with (rates are never negated). */
export interface ImpactLineAmounts extends ImpactAmounts {
  impactTaxRate: string
  serviceFeeTaxRate: string
}

export interface ImpactAddress {
  line1: string | null
  line2: string | null
  line3: string | null
  city: string | null
  state: string | null
  postalCode: string | null
  countryCode: string | null
}

export interface ImpactMerchant {
  name: string
  mcc: string | null
  address: ImpactAddress | null
}

export interface ImpactCreditLine {
  impactPartnerId: string
  projectId: string
  /** tCO2e bought for this project (negated in a reversal). */
  quantityTonnes: string
  amounts: ImpactLineAmounts
}

export interface ImpactContributionLine {
  impactPartnerId: string
  amounts: ImpactLineAmounts
}

/** One reconciliation record: an allocation, or (reversal: true, with reversalId) its reversal. */
export interface ImpactRecord {
  fundsAllocationId: string
  /** Present on a reversal's record only: its id as a record. */
  reversalId?: string
  quoteId: string
  /** ISO 8601 UTC: when the allocation (or the reversal) was recorded. */
  fundsDateTime: string
  consumerReference: string | null
  fundsOrganisationId: string
  fundsOrganisationReference: string | null
  collectionOrganisationId: string
  fundsCurrencyCode: string
  reversal: boolean
  taxLiability: 'platform' | 'organisation'
  amounts: ImpactAmounts
  merchant: ImpactMerchant
  credits: ImpactCreditLine[]
  contributions: ImpactContributionLine[]
}

/** An address as quotes and organisations keep it (missing parts absent or null). */
export interface AddressSource {
  line1?: string | null | undefined
  line2?: string | null | undefined
  line3?: string | null | undefined
  city?: string | null | undefined
  state?: string | null | undefined
  postalCode?: string | null | undefined
  countryCode?: string | null | undefined
}

/** What an allocation (or its reversal) supplies to build its record; all of it is at hand when it is written. */
export interface ImpactRecordSource {
  allocation: {
    id: string
    quoteId: string
    organisationId: string
    currencyCode: string
    taxLiability: 'platform' | 'organisation'
    split: AllocationSplit
    createdAt: Date
  }
  /** The organisation of the API key that made the allocation (the party collecting the funds). */
  collectionOrganisationId: string
  /** The quote's consumer.reference. */
  consumerReference: string | null
  /** The quote's merchant, when the quote named one. */
  merchant?: { name: string; mcc: string; address?: AddressSource | null | undefined } | null | undefined
  /** The allocation's organisation: its reference, and the merchant details used when the quote named no merchant. */
  fundsOrganisation: { reference: string | null; name: string; mcc: string | null; address: AddressSource | null }
}

/** The id a record is known by (in cursors and in the single-record read): the reversal id, else the allocation id. */
export const impactRecordId = (record: Pick<ImpactRecord, 'fundsAllocationId' | 'reversalId'>): string =>
  record.reversalId ?? record.fundsAllocationId

const addressOf = (a: AddressSource | null | undefined): ImpactAddress | null =>
  a
    ? {
        line1: a.line1 ?? null,
        line2: a.line2 ?? null,
        line3: a.line3 ?? null,
        city: a.city ?? null,
        state: a.state ?? null,
        postalCode: a.postalCode ?? null,
        countryCode: a.countryCode ?? null,
      }
    : null

const PLAIN_AMOUNT = /^(-?)(\d+)(?:\.(\d+))?$/

/**
 * An amount in minor units. Stored amounts are plain decimals with the currency's digits ("12.60"), read without
 * Decimal (a page holds hundreds of them); anything else goes through the exact Decimal path.
 */
function minorOf(amount: string, digits: number): bigint {
  const m = PLAIN_AMOUNT.exec(amount)
  const fraction = m?.[3] ?? ''
  if (m && fraction.length <= digits) {
    const minor = BigInt(`${m[2]}${fraction.padEnd(digits, '0')}`)
    return m[1] === '-' ? -minor : minor
  }
  return toMinorUnits(parseDecimal(amount), digits)
}

/** Running sums of a record's lines, in minor units. */
interface MinorSums {
  impact: bigint
  impactTax: bigint
  serviceFee: bigint
  serviceFeeTax: bigint
}

/** A line's amounts at `digits` decimals; adds them to `sums` (the record's amounts are the exact sums of its lines). */
function lineAmounts(e: AllocationEntryAmounts, digits: number, sums: MinorSums): ImpactLineAmounts {
  const impact = minorOf(e.impactAmount, digits)
  const impactTax = minorOf(e.impactSalesTaxAmount, digits)
  const serviceFee = minorOf(e.serviceFeeAmount, digits)
  const serviceFeeTax = minorOf(e.serviceFeeSalesTaxAmount, digits)
  sums.impact += impact
  sums.impactTax += impactTax
  sums.serviceFee += serviceFee
  sums.serviceFeeTax += serviceFeeTax
  return {
    total: formatMinorUnits(impact + impactTax + serviceFee + serviceFeeTax, digits),
    impact: formatMinorUnits(impact, digits),
    impactTax: formatMinorUnits(impactTax, digits),
    serviceFee: formatMinorUnits(serviceFee, digits),
    serviceFeeTax: formatMinorUnits(serviceFeeTax, digits),
    impactTaxRate: e.impactSalesTaxRate,
    serviceFeeTaxRate: e.serviceFeeSalesTaxRate,
  }
}

/**
 * The record of an allocation: its lines in the split's order (credits, then contributions), the record's amounts
 * the exact sums of its lines, the merchant the quote named (else the allocation's organisation).
 */
export function buildImpactRecord(source: ImpactRecordSource): ImpactRecord {
  const { allocation } = source
  const digits = minorUnitsOf(allocation.currencyCode)
  const sums: MinorSums = { impact: 0n, impactTax: 0n, serviceFee: 0n, serviceFeeTax: 0n }
  const credits: ImpactCreditLine[] = allocation.split.credits.map((e) => ({
    impactPartnerId: e.impactPartnerId,
    projectId: e.projectId,
    quantityTonnes: e.quantityTonnes,
    amounts: lineAmounts(e, digits, sums),
  }))
  const contributions: ImpactContributionLine[] = allocation.split.contributions.map((e) => ({
    impactPartnerId: e.impactPartnerId,
    amounts: lineAmounts(e, digits, sums),
  }))
  const merchant: ImpactMerchant = source.merchant
    ? { name: source.merchant.name, mcc: source.merchant.mcc, address: addressOf(source.merchant.address) }
    : { name: source.fundsOrganisation.name, mcc: source.fundsOrganisation.mcc, address: addressOf(source.fundsOrganisation.address) }
  return {
    fundsAllocationId: allocation.id,
    quoteId: allocation.quoteId,
    fundsDateTime: allocation.createdAt.toISOString(),
    consumerReference: source.consumerReference,
    fundsOrganisationId: allocation.organisationId,
    fundsOrganisationReference: source.fundsOrganisation.reference,
    collectionOrganisationId: source.collectionOrganisationId,
    fundsCurrencyCode: allocation.currencyCode,
    reversal: false,
    taxLiability: allocation.taxLiability,
    amounts: {
      total: formatMinorUnits(sums.impact + sums.impactTax + sums.serviceFee + sums.serviceFeeTax, digits),
      impact: formatMinorUnits(sums.impact, digits),
      impactTax: formatMinorUnits(sums.impactTax, digits),
      serviceFee: formatMinorUnits(sums.serviceFee, digits),
      serviceFeeTax: formatMinorUnits(sums.serviceFeeTax, digits),
    },
    merchant,
    credits,
    contributions,
  }
}

/** Negates a formatted amount without reformatting it; zero stays unsigned ("0.00", never "-0.00"). */
function negate(amount: string): string {
  if (amount.startsWith('-')) return amount.slice(1)
  const zero = PLAIN_AMOUNT.test(amount) ? /^0*\.?0*$/.test(amount) : new Decimal(amount).isZero()
  return zero ? amount : `-${amount}`
}

const negateAmounts = <T extends ImpactAmounts>(a: T): T => ({
  ...a,
  total: negate(a.total),
  impact: negate(a.impact),
  impactTax: negate(a.impactTax),
  serviceFee: negate(a.serviceFee),
  serviceFeeTax: negate(a.serviceFeeTax),
})

/**
 * The record of a reversal: the allocation's record at the reversal's own time, `reversal: true`, its `reversalId`,
 * every amount and quantity negated (zero unsigned), rates unchanged.
 */
export function reversalImpactRecord(record: ImpactRecord, reversal: { id: string; createdAt: Date }): ImpactRecord {
  return {
    ...record,
    reversalId: reversal.id,
    fundsDateTime: reversal.createdAt.toISOString(),
    reversal: true,
    amounts: negateAmounts(record.amounts),
    merchant: record.merchant,
    credits: record.credits.map((line) => ({ ...line, quantityTonnes: negate(line.quantityTonnes), amounts: negateAmounts(line.amounts) })),
    contributions: record.contributions.map((line) => ({ ...line, amounts: negateAmounts(line.amounts) })),
  }
}
