// A monthly statement (docs/reconciliation.md, "Statements"): per currency, what an organisation collected, the
// impact it owes onward, the fee, the profit share it earned and the tax on each, net of reversals, and how each
// settles under the settlement model its records locked. Pure: the sums come in (exact decimal strings), the
// statement goes out with every amount at its currency's minor units.
import { Decimal, formatDecimal, minorUnitsOf } from './money.js'
import { DomainError } from './errors.js'
import type { SettlementModel } from './profit-share.js'

export interface StatementInput {
  organisationId: string
  /** "YYYY-MM". */
  period: string
  settlementModel: SettlementModel
  now: Date
  collected: readonly {
    currencyCode: string
    allocations: number
    reversals: number
    total: string
    impact: string
    impactTax: string
    serviceFee: string
    serviceFeeTax: string
  }[]
  /** Σ of every beneficiary's funds share on the net-settled records it collected. */
  withheld: readonly { currencyCode: string; amount: string }[]
  /** Σ of its own lines, by billing currency and the settlement model each record locked. */
  earned: readonly { currencyCode: string; settlementModel: SettlementModel; lines: number; profitShare: string; profitShareTax: string }[]
}

export interface StatementCurrency {
  currencyCode: string
  /** The records it collected (its API key made the allocation); impact + impactTax is what it owes onward for impact. */
  collected: {
    allocations: number
    reversals: number
    total: string
    impact: string
    impactTax: string
    serviceFee: string
    serviceFeeTax: string
  }
  /** Its own profit-share lines: what it earned of the fees of its tree's allocations, and the tax on that. */
  profitShare: { lines: number; earned: string; tax: string }
  settlement: {
    /** What it pays the platform for what it collected: all of it, less the profit share withheld (net). */
    payableToPlatform: string
    /** Net model: every beneficiary's share of the fees it collected, kept back (it pays the others their part). */
    profitShareWithheld: string
    /** Gross model: its share and the tax on it, paid by the platform. */
    profitShareFromPlatform: string
    /** Invoice model: its share and the tax on it, credited against the platform's invoice. */
    profitShareCreditedOnInvoice: string
    /** Net model: its share and the tax on it, settled by the organisation that collected (itself, when it did). */
    profitShareFromCollector: string
  }
}

export interface Statement {
  organisationId: string
  period: string
  /** [from, to): the month in UTC. */
  from: string
  to: string
  /** False for the current month: the figures so far. */
  complete: boolean
  /** The tree's settlement model today (each record settles under the model it locked). */
  settlementModel: SettlementModel
  currencies: StatementCurrency[]
}

/** The month [from, to) of "YYYY-MM" in UTC; a month that has not begun → PERIOD_IN_FUTURE. */
export function statementPeriod(period: string, now: Date): { from: Date; to: Date; complete: boolean } {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(period)
  if (!match) throw new RangeError(`expected a YYYY-MM period, got ${JSON.stringify(period)}`)
  const year = Number(match[1])
  const month = Number(match[2])
  const from = new Date(Date.UTC(year, month - 1, 1))
  const to = new Date(Date.UTC(year, month, 1))
  if (from.getTime() > now.getTime()) {
    throw new DomainError('PERIOD_IN_FUTURE', `the period ${period} has not begun`, '/period')
  }
  return { from, to, complete: to.getTime() <= now.getTime() }
}

const ZERO = new Decimal(0)

/** The statement from its sums: one entry per currency that has any, in currency order. */
export function buildStatement(input: StatementInput): Statement {
  const { from, to, complete } = statementPeriod(input.period, input.now)
  const codes = [...new Set([...input.collected, ...input.withheld, ...input.earned].map((s) => s.currencyCode))].sort()
  const currencies = codes.map((currencyCode): StatementCurrency => {
    const digits = minorUnitsOf(currencyCode)
    const money = (value: Decimal | string): string => formatDecimal(new Decimal(value), digits)
    const collected = input.collected.find((c) => c.currencyCode === currencyCode)
    const withheld = new Decimal(input.withheld.find((w) => w.currencyCode === currencyCode)?.amount ?? '0')
    const earned = input.earned.filter((e) => e.currencyCode === currencyCode)
    const byModel = (model: SettlementModel) =>
      earned.filter((e) => e.settlementModel === model).reduce((sum, e) => sum.plus(e.profitShare).plus(e.profitShareTax), ZERO)
    const total = new Decimal(collected?.total ?? '0')
    return {
      currencyCode,
      collected: {
        allocations: collected?.allocations ?? 0,
        reversals: collected?.reversals ?? 0,
        total: money(total),
        impact: money(collected?.impact ?? '0'),
        impactTax: money(collected?.impactTax ?? '0'),
        serviceFee: money(collected?.serviceFee ?? '0'),
        serviceFeeTax: money(collected?.serviceFeeTax ?? '0'),
      },
      profitShare: {
        lines: earned.reduce((n, e) => n + e.lines, 0),
        earned: money(earned.reduce((sum, e) => sum.plus(e.profitShare), ZERO)),
        tax: money(earned.reduce((sum, e) => sum.plus(e.profitShareTax), ZERO)),
      },
      settlement: {
        payableToPlatform: money(total.minus(withheld)),
        profitShareWithheld: money(withheld),
        profitShareFromPlatform: money(byModel('gross')),
        profitShareCreditedOnInvoice: money(byModel('invoice')),
        profitShareFromCollector: money(byModel('net')),
      },
    }
  })
  return {
    organisationId: input.organisationId,
    period: input.period,
    from: from.toISOString(),
    to: to.toISOString(),
    complete,
    settlementModel: input.settlementModel,
    currencies,
  }
}
