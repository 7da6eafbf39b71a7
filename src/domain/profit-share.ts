// Profit share (docs/pricing.md, "Profit share"): how an allocation's service fee is shared down an organisation
// tree. Each organisation has a relative share of what its parent receives (the platform above a root receives the
// whole fee); its proportional share is the product of the relative shares from the root down to it, and what it
// keeps is its proportional share minus what its child on the allocation's chain receives. The fee is split to the
// minor unit by largest remainder, so the beneficiaries and the platform's remainder sum to the fee exactly. Each
// share carries the tax of its beneficiary's jurisdiction and is converted into its billing currency, both locked
// when the allocation is written. Pure: the date and the exchange rates are inputs.
import type { AllocationSplit, FxTable, TaxJurisdiction } from './types.js'
import {
  Decimal,
  decimalTextToMinorUnits,
  formatDecimal,
  formatMinorUnits,
  formatRate,
  minorUnitsOf,
  parseDecimal,
  plainDecimalOf,
  productHalfUp,
  roundHalfUp,
  splitByIntegerWeights,
  toMinorUnits,
  type PlainDecimal,
} from './money.js'
import { DomainError } from './errors.js'
import { convert, isPricedCurrency } from './fx.js'
import { taxRuleFor } from './tax.js'
import { normaliseSubdivision, toAlpha2 } from './countries.js'
import type { ImpactAmounts, ImpactRecord } from './impact-record.js'

/** ekko's settlement models: who settles the profit share, and how (docs/pricing.md, "Settlement models"). */
export const SETTLEMENT_MODELS = ['net', 'gross', 'invoice'] as const
export type SettlementModel = (typeof SETTLEMENT_MODELS)[number]
/** A tree whose root has none set settles gross: the platform collects everything and pays the shares itself. */
export const DEFAULT_SETTLEMENT_MODEL: SettlementModel = 'gross'

/** Decimal places a relative share may have (like a service fee). */
export const PROFIT_SHARE_DECIMALS = 6
const SHARE_SCALE = 10n ** BigInt(PROFIT_SHARE_DECIMALS)
/** Significant digits of a locked billing exchange rate (the ECB publishes 5 or 6). */
export const BILLING_RATE_SIGNIFICANT_DIGITS = 10

/**
 * A relative profit share as its shortest exact decimal string ("0.60" → "0.6"): a number from 0 to 1 with at most
 * 6 decimals. Anything else → INVALID_PROFIT_SHARE at `path`.
 */
export function parseRelativeProfitShare(value: string | number, path = '/relativeProfitShare'): string {
  const text = typeof value === 'number' ? String(value) : value
  let share: Decimal
  try {
    share = parseDecimal(text, path)
  } catch {
    throw new DomainError('INVALID_PROFIT_SHARE', 'relativeProfitShare must be a number from 0 to 1', path)
  }
  if (share.isNegative() && !share.isZero()) {
    throw new DomainError('INVALID_PROFIT_SHARE', 'relativeProfitShare must be a number from 0 to 1', path)
  }
  if (share.greaterThan(1)) throw new DomainError('INVALID_PROFIT_SHARE', 'relativeProfitShare must be a number from 0 to 1', path)
  if (share.decimalPlaces() > PROFIT_SHARE_DECIMALS) {
    throw new DomainError('INVALID_PROFIT_SHARE', `relativeProfitShare may have at most ${PROFIT_SHARE_DECIMALS} decimals`, path)
  }
  return formatRate(share)
}

/** r × 10⁶ as an integer (the share is already valid: 0–1, at most 6 decimals). */
const shareUnits = (relative: string): bigint => toMinorUnits(new Decimal(relative), PROFIT_SHARE_DECIMALS)

/**
 * The proportional shares down a chain of relative shares (root first): p₀ = r₀ (the platform above the root
 * receives the whole fee), pₖ = rₖ × pₖ₋₁. Exact decimal strings (a chain of k levels has up to 6k decimals).
 */
export function proportionalProfitShares(relative: readonly string[]): string[] {
  let numerator = 1n
  return relative.map((share, level) => {
    numerator *= shareUnits(share)
    return formatRate(formatMinorUnits(numerator, PROFIT_SHARE_DECIMALS * (level + 1)))
  })
}

/**
 * What each level of a chain keeps, as integers over one denominator (10^(6·levels)): its proportional share minus
 * its child's on the chain (the last level keeps all of its own). Exact, so the split below is exact too.
 */
export function keptProfitShares(relative: readonly string[]): { kept: bigint[]; denominator: bigint } {
  const levels = relative.length
  const denominator = SHARE_SCALE ** BigInt(levels)
  let numerator = 1n
  const proportional = relative.map((share, level) => {
    numerator *= shareUnits(share)
    return numerator * SHARE_SCALE ** BigInt(levels - 1 - level)
  })
  const kept = proportional.map((p, level) => p - (proportional[level + 1] ?? 0n))
  return { kept, denominator }
}

/**
 * Splits a fee (minor units) between beneficiaries keeping `shares`/`denominator` of it and the platform, which keeps
 * the rest: largest remainder over [platform, ...beneficiaries] (ties to the platform, then the level nearer the
 * root), so every part is within one minor unit of its exact share and the parts sum to the fee. Shares that would
 * pay out more than the fee (negative, or summing past the whole) → PROFIT_SHARE_EXCEEDS_FEE.
 */
export function splitFeeByShares(
  fee: bigint,
  shares: readonly bigint[],
  denominator: bigint,
): { platform: bigint; beneficiaries: bigint[] } {
  const total = shares.reduce((sum, share) => sum + share, 0n)
  if (denominator <= 0n || shares.some((share) => share < 0n) || total > denominator) {
    throw new DomainError('PROFIT_SHARE_EXCEEDS_FEE', "the organisation chain's profit shares would exceed the service fee")
  }
  const [platform = 0n, ...beneficiaries] = splitByIntegerWeights(fee, [denominator - total, ...shares])
  return { platform, beneficiaries }
}

/** One organisation of an allocation's chain, root first, as it stands when the allocation is written. */
export interface ProfitShareBeneficiary {
  readonly relativeProfitShare: string
  /** The currency it is billed in (its billing currency, else its own). */
  readonly billingCurrencyCode: string
  /** Where the tax on its share is due (its billing country, else its address). */
  readonly taxJurisdiction: TaxJurisdiction
}

/**
 * Where the tax on a beneficiary's share is due: its billing country (else its address's), with the state or province
 * for the US and Canada when it is a recognised one (an unrecognised address state counts as none: an allocation is
 * never refused for a beneficiary's address; billing states are checked when they are set).
 */
export function beneficiaryJurisdiction(countryAlpha3: string, state: string | null | undefined): TaxJurisdiction {
  const country = toAlpha2(countryAlpha3)
  if (country === undefined) throw new RangeError(`unknown country ${JSON.stringify(countryAlpha3)}`)
  const subdivision = country === 'US' || country === 'CA' ? normaliseSubdivision(countryAlpha3, state) : null
  return { country, state: subdivision, basis: 'merchant' }
}

/** One beneficiary's part of one allocation (or, negated, of its reversal). Amounts are decimal strings. */
export interface ProfitShareLine {
  /** The beneficiary's depth in the tree: 0 = the root (its organisation is the chain's organisation at that depth). */
  readonly level: number
  /** Its part of the fee in the funds currency, at that currency's minor units (the exact split). */
  readonly fundsProfitShare: string
  readonly billingCurrencyCode: string
  /** Billing-currency units per funds-currency unit, locked ("1" when they are the same currency). */
  readonly billingCurrencyExchangeRate: string
  /** fundsProfitShare × rate, in the billing currency at its minor units. */
  readonly profitShare: string
  /** fundsProfitShare × rate × tax rate, in the billing currency at its minor units. */
  readonly profitShareTax: string
  readonly profitShareTaxRate: string
}

/** The profit share of an allocation: its settlement model, the platform's part and one line per beneficiary. */
export interface ProfitShareSplit {
  readonly settlementModel: SettlementModel
  /** What the platform keeps of the fee, in the funds currency. */
  readonly platformProfitShare: string
  readonly lines: readonly ProfitShareLine[]
}

export interface ProfitShareInput {
  /** The allocation's service fee (credits and contribution together, before its tax), in the funds currency. */
  readonly fee: string
  readonly fundsCurrencyCode: string
  /** The allocation organisation's chain, root first (the allocation's organisation last). */
  readonly chain: readonly ProfitShareBeneficiary[]
  readonly settlementModel: SettlementModel
  /** "YYYY-MM-DD" (UTC): the allocation's date, for the tax rates. */
  readonly date: string
  /** The exchange rates in use, for billing currencies other than the funds currency. */
  readonly fx: FxTable
}

/**
 * The billing rate from the funds currency: the table's cross rate to 10 significant digits, the figure the record
 * shows and the one its amounts are computed with. A billing currency the table cannot price (rates imported since
 * it was set) falls back to the funds currency: an allocation is never refused for a beneficiary's billing setting.
 */
function billingRate(from: string, to: string, fx: FxTable): { currencyCode: string; rate: Decimal } {
  if (from === to || !isPricedCurrency(to, fx)) return { currencyCode: from, rate: new Decimal(1) }
  const cross = new Decimal(convert(new Decimal(1), from, to, fx).rate)
  return { currencyCode: to, rate: cross.toSignificantDigits(BILLING_RATE_SIGNIFICANT_DIGITS, Decimal.ROUND_HALF_UP) }
}

/** A rate as the record shows it, as a Decimal, and as an exact fraction when it is a plain decimal. */
interface LockedRate {
  readonly decimal: Decimal
  readonly text: string
  readonly plain: PlainDecimal | undefined
}
const lockedRate = (decimal: Decimal): LockedRate => {
  const text = formatRate(decimal)
  return { decimal, text, plain: plainDecimalOf(text) }
}

/**
 * What a split needs of its inputs that does not depend on the fee, kept per object: the reference data gives the same
 * chain array, FX table and beneficiary objects until it is loaded again, and none of them is ever changed. So these are
 * worked out once per chain, currency pair and beneficiary's tax date instead of once per allocation.
 */
const keptByChain = new WeakMap<readonly ProfitShareBeneficiary[], { kept: bigint[]; denominator: bigint }>()
const billingByTable = new WeakMap<FxTable, Map<string, { currencyCode: string; rate: LockedRate }>>()
const taxByBeneficiary = new WeakMap<ProfitShareBeneficiary, { date: string; rate: LockedRate }>()

function keptOf(chain: readonly ProfitShareBeneficiary[]): { kept: bigint[]; denominator: bigint } {
  let kept = keptByChain.get(chain)
  if (kept === undefined) {
    kept = keptProfitShares(chain.map((b) => b.relativeProfitShare))
    keptByChain.set(chain, kept)
  }
  return kept
}

function billingOf(from: string, to: string, fx: FxTable): { currencyCode: string; rate: LockedRate } {
  let byPair = billingByTable.get(fx)
  if (byPair === undefined) {
    byPair = new Map()
    billingByTable.set(fx, byPair)
  }
  const pair = `${from}>${to}`
  let billing = byPair.get(pair)
  if (billing === undefined) {
    const { currencyCode, rate } = billingRate(from, to, fx)
    billing = { currencyCode, rate: lockedRate(rate) }
    byPair.set(pair, billing)
  }
  return billing
}

function serviceFeeTaxOf(beneficiary: ProfitShareBeneficiary, date: string): LockedRate {
  const kept = taxByBeneficiary.get(beneficiary)
  if (kept !== undefined && kept.date === date) return kept.rate
  const rate = lockedRate(taxRuleFor('serviceFee', beneficiary.taxJurisdiction, date).rate)
  taxByBeneficiary.set(beneficiary, { date, rate })
  return rate
}

/**
 * `minor` (at `digits`) × the rates, rounded half-up once to `decimals`: in integers where that is provably Decimal's
 * result (productHalfUp), else with Decimal.
 */
function timesRatesHalfUp(minor: bigint, digits: number, rates: readonly LockedRate[], decimals: number): string {
  const exact = productHalfUp(
    minor,
    digits,
    rates.map((r) => r.plain),
    decimals,
  )
  if (exact !== undefined) return exact
  let product = new Decimal(formatMinorUnits(minor, digits))
  for (const rate of rates) product = product.times(rate.decimal)
  return formatDecimal(roundHalfUp(product, decimals), decimals)
}

/**
 * The profit share of an allocation's fee, or null when no organisation of its chain keeps a share (nothing is
 * stored then). Lines are root first, one per organisation whose kept share is above 0 (its amount may round to 0).
 * Each line's share is the exact split of the fee; its billing amounts are that share × the locked rate and × the
 * tax rate of its jurisdiction on the allocation's date, each rounded half-up once to the billing currency's minor
 * units.
 */
export function splitProfitShare(input: ProfitShareInput): ProfitShareSplit | null {
  const { kept, denominator } = keptOf(input.chain)
  if (kept.every((share) => share === 0n)) return null
  const digits = minorUnitsOf(input.fundsCurrencyCode)
  const fee = decimalTextToMinorUnits(input.fee, digits)
  const split = splitFeeByShares(fee, kept, denominator)
  const lines: ProfitShareLine[] = []
  input.chain.forEach((beneficiary, level) => {
    if ((kept[level] ?? 0n) === 0n) return
    const fundsMinor = split.beneficiaries[level] ?? 0n
    const { currencyCode, rate } = billingOf(input.fundsCurrencyCode, beneficiary.billingCurrencyCode, input.fx)
    const billingDigits = minorUnitsOf(currencyCode)
    const taxRate = serviceFeeTaxOf(beneficiary, input.date)
    lines.push({
      level,
      fundsProfitShare: formatMinorUnits(fundsMinor, digits),
      billingCurrencyCode: currencyCode,
      billingCurrencyExchangeRate: rate.text,
      profitShare: timesRatesHalfUp(fundsMinor, digits, [rate], billingDigits),
      profitShareTax: timesRatesHalfUp(fundsMinor, digits, [rate, taxRate], billingDigits),
      profitShareTaxRate: taxRate.text,
    })
  })
  return { settlementModel: input.settlementModel, platformProfitShare: formatMinorUnits(split.platform, digits), lines }
}

/** An allocation's service fee (credits and contribution together, before its tax): what profit share splits. */
export function serviceFeeOf(split: AllocationSplit): string {
  const digits = minorUnitsOf(split.currencyCode)
  let minor = 0n
  for (const entry of split.credits) minor += decimalTextToMinorUnits(entry.serviceFeeAmount, digits)
  for (const entry of split.contributions) minor += decimalTextToMinorUnits(entry.serviceFeeAmount, digits)
  return formatMinorUnits(minor, digits)
}

/** Negates a formatted amount without reformatting it; zero stays unsigned. */
const negate = (amount: string): string => (amount.startsWith('-') ? amount.slice(1) : /^0*\.?0*$/.test(amount) ? amount : `-${amount}`)

/** A reversal's profit share: every amount of its allocation's negated exactly; rates and currencies unchanged. */
export function reverseProfitShare(split: ProfitShareSplit): ProfitShareSplit {
  return {
    settlementModel: split.settlementModel,
    platformProfitShare: negate(split.platformProfitShare),
    lines: split.lines.map((line) => ({
      ...line,
      fundsProfitShare: negate(line.fundsProfitShare),
      profitShare: negate(line.profitShare),
      profitShareTax: negate(line.profitShareTax),
    })),
  }
}

/** An organisation of a chain as a record names it. */
export interface ChainLink {
  readonly id: string
  readonly reference: string | null
}

export interface ProfitShareAllocation {
  beneficiaryOrganisationId: string
  beneficiaryOrganisationReference: string | null
  billingCurrencyCode: string
  billingCurrencyExchangeRate: string
  fundsProfitShare: string
  amounts: { profitShare: string; profitShareTax: string; profitShareTaxRate: string }
}

/**
 * A profit-share reconciliation record: ekko's profit-share recon record (the impact record's header with the
 * billing organisation instead of the collecting one and the merchant's name and MCC only) with the settlement model,
 * the platform's part and ekko's `profitShareAllocations`.
 */
export interface ProfitShareRecord {
  fundsAllocationId: string
  reversalId?: string
  quoteId: string
  fundsDateTime: string
  consumerReference: string | null
  fundsOrganisationId: string
  fundsOrganisationReference: string | null
  /** The organisation that settles the allocation with the platform: the one whose API key made it. */
  billingOrganisationId: string
  fundsCurrencyCode: string
  reversal: boolean
  taxLiability: 'platform' | 'organisation'
  amounts: ImpactAmounts
  merchant: { name: string; mcc: string | null }
  settlementModel: SettlementModel
  /** null when the reader does not see every line (only the tree's root does). */
  platformProfitShare: string | null
  profitShareAllocations: ProfitShareAllocation[]
}

/**
 * The record of an allocation or a reversal (`impact` already built, negated for a reversal, and `split` likewise)
 * as a reader sees it: the lines of beneficiaries at depth `visibleFromLevel` or deeper (0: every line). `chain` is
 * the funds organisation's chain, root first: a line's level is its index there.
 */
export function buildProfitShareRecord(
  impact: ImpactRecord,
  split: ProfitShareSplit,
  chain: readonly ChainLink[],
  visibleFromLevel = 0,
): ProfitShareRecord {
  return {
    fundsAllocationId: impact.fundsAllocationId,
    ...(impact.reversalId === undefined ? {} : { reversalId: impact.reversalId }),
    quoteId: impact.quoteId,
    fundsDateTime: impact.fundsDateTime,
    consumerReference: impact.consumerReference,
    fundsOrganisationId: impact.fundsOrganisationId,
    fundsOrganisationReference: impact.fundsOrganisationReference,
    billingOrganisationId: impact.collectionOrganisationId,
    fundsCurrencyCode: impact.fundsCurrencyCode,
    reversal: impact.reversal,
    taxLiability: impact.taxLiability,
    amounts: impact.amounts,
    merchant: { name: impact.merchant.name, mcc: impact.merchant.mcc },
    settlementModel: split.settlementModel,
    platformProfitShare: visibleFromLevel === 0 ? split.platformProfitShare : null,
    profitShareAllocations: split.lines
      .filter((line) => line.level >= visibleFromLevel)
      .map((line) => {
        const link = chain[line.level]
        if (link === undefined) throw new Error(`profit-share line at level ${line.level} of a chain of ${chain.length}`)
        return {
          beneficiaryOrganisationId: link.id,
          beneficiaryOrganisationReference: link.reference,
          billingCurrencyCode: line.billingCurrencyCode,
          billingCurrencyExchangeRate: line.billingCurrencyExchangeRate,
          fundsProfitShare: line.fundsProfitShare,
          amounts: { profitShare: line.profitShare, profitShareTax: line.profitShareTax, profitShareTaxRate: line.profitShareTaxRate },
        }
      }),
  }
}
