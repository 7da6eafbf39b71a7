// splitProfitShare (src/domain/profit-share.ts) as it computed every allocation's profit share before its per-chain,
// per-rate and per-beneficiary memos and its integer products: Decimal for every line. Kept only as the reference the
// property test compares the current function with, byte for byte.
import {
  Decimal,
  formatDecimal,
  formatMinorUnits,
  formatRate,
  minorUnitsOf,
  parseDecimal,
  roundHalfUp,
  toMinorUnits,
} from '../../../src/domain/money.js'
import { convert, isPricedCurrency } from '../../../src/domain/fx.js'
import { taxRuleFor } from '../../../src/domain/tax.js'
import type { FxTable } from '../../../src/domain/types.js'
import {
  BILLING_RATE_SIGNIFICANT_DIGITS,
  keptProfitShares,
  splitFeeByShares,
  type ProfitShareInput,
  type ProfitShareLine,
  type ProfitShareSplit,
} from '../../../src/domain/profit-share.js'

/**
 * The billing rate from the funds currency: the table's cross rate to 10 significant digits, the figure the record
 * shows and the one its amounts are computed with. A billing currency the table cannot price (rates imported since
 * it was set) falls back to the funds currency: an allocation is never refused for a beneficiary's billing setting.
 */
function billingRateBefore(from: string, to: string, fx: FxTable): { currencyCode: string; rate: Decimal } {
  if (from === to || !isPricedCurrency(to, fx)) return { currencyCode: from, rate: new Decimal(1) }
  const cross = new Decimal(convert(new Decimal(1), from, to, fx).rate)
  return { currencyCode: to, rate: cross.toSignificantDigits(BILLING_RATE_SIGNIFICANT_DIGITS, Decimal.ROUND_HALF_UP) }
}

/**
 * The profit share of an allocation's fee, or null when no organisation of its chain keeps a share (nothing is
 * stored then). Lines are root first, one per organisation whose kept share is above 0 (its amount may round to 0).
 * Each line's share is the exact split of the fee; its billing amounts are that share × the locked rate and × the
 * tax rate of its jurisdiction on the allocation's date, each rounded half-up once to the billing currency's minor
 * units.
 */
export function splitProfitShareBefore(input: ProfitShareInput): ProfitShareSplit | null {
  const { kept, denominator } = keptProfitShares(input.chain.map((b) => b.relativeProfitShare))
  if (kept.every((share) => share === 0n)) return null
  const digits = minorUnitsOf(input.fundsCurrencyCode)
  const fee = toMinorUnits(parseDecimal(input.fee), digits)
  const split = splitFeeByShares(fee, kept, denominator)
  const lines: ProfitShareLine[] = []
  input.chain.forEach((beneficiary, level) => {
    if ((kept[level] ?? 0n) === 0n) return
    const fundsMinor = split.beneficiaries[level] ?? 0n
    const { currencyCode, rate } = billingRateBefore(input.fundsCurrencyCode, beneficiary.billingCurrencyCode, input.fx)
    const billingDigits = minorUnitsOf(currencyCode)
    const billed = new Decimal(formatMinorUnits(fundsMinor, digits)).times(rate)
    const taxRate = taxRuleFor('serviceFee', beneficiary.taxJurisdiction, input.date).rate
    lines.push({
      level,
      fundsProfitShare: formatMinorUnits(fundsMinor, digits),
      billingCurrencyCode: currencyCode,
      billingCurrencyExchangeRate: formatRate(rate),
      profitShare: formatDecimal(roundHalfUp(billed, billingDigits), billingDigits),
      profitShareTax: formatDecimal(roundHalfUp(billed.times(taxRate), billingDigits), billingDigits),
      profitShareTaxRate: formatRate(taxRate),
    })
  })
  return { settlementModel: input.settlementModel, platformProfitShare: formatMinorUnits(split.platform, digits), lines }
}
