// Statement → wire: JSON numbers at the currency's precision, or CSV (the reconciliation CSV's conventions), one row
// per currency.
import type { Statement } from '../../domain/statement.js'
import type { StatementResponse } from '../schemas/statements.js'
import { numberCell, row, textCell } from './reconciliation-csv.js'

export const presentStatement = (s: Statement): StatementResponse => ({
  organisationId: s.organisationId,
  period: s.period,
  from: s.from,
  to: s.to,
  complete: s.complete,
  settlementModel: s.settlementModel,
  currencies: s.currencies.map((c) => ({
    currencyCode: c.currencyCode,
    collected: {
      allocations: c.collected.allocations,
      reversals: c.collected.reversals,
      total: Number(c.collected.total),
      impact: Number(c.collected.impact),
      impactTax: Number(c.collected.impactTax),
      serviceFee: Number(c.collected.serviceFee),
      serviceFeeTax: Number(c.collected.serviceFeeTax),
    },
    profitShare: { lines: c.profitShare.lines, earned: Number(c.profitShare.earned), tax: Number(c.profitShare.tax) },
    settlement: {
      payableToPlatform: Number(c.settlement.payableToPlatform),
      profitShareWithheld: Number(c.settlement.profitShareWithheld),
      profitShareFromPlatform: Number(c.settlement.profitShareFromPlatform),
      profitShareCreditedOnInvoice: Number(c.settlement.profitShareCreditedOnInvoice),
      profitShareFromCollector: Number(c.settlement.profitShareFromCollector),
    },
  })),
})

export const STATEMENT_CSV_COLUMNS = [
  'organisationId',
  'period',
  'complete',
  'settlementModel',
  'currencyCode',
  'allocations',
  'reversals',
  'collectedTotal',
  'impact',
  'impactTax',
  'serviceFee',
  'serviceFeeTax',
  'profitShareLines',
  'profitShareEarned',
  'profitShareTax',
  'payableToPlatform',
  'profitShareWithheld',
  'profitShareFromPlatform',
  'profitShareCreditedOnInvoice',
  'profitShareFromCollector',
] as const

/** The statement as CSV: a header, then one row per currency (amounts exactly as computed). */
export function statementCsv(s: Statement): string {
  return (
    row([...STATEMENT_CSV_COLUMNS]) +
    s.currencies
      .map((c) =>
        row([
          textCell(s.organisationId),
          textCell(s.period),
          s.complete ? 'true' : 'false',
          textCell(s.settlementModel),
          textCell(c.currencyCode),
          String(c.collected.allocations),
          String(c.collected.reversals),
          numberCell(c.collected.total),
          numberCell(c.collected.impact),
          numberCell(c.collected.impactTax),
          numberCell(c.collected.serviceFee),
          numberCell(c.collected.serviceFeeTax),
          String(c.profitShare.lines),
          numberCell(c.profitShare.earned),
          numberCell(c.profitShare.tax),
          numberCell(c.settlement.payableToPlatform),
          numberCell(c.settlement.profitShareWithheld),
          numberCell(c.settlement.profitShareFromPlatform),
          numberCell(c.settlement.profitShareCreditedOnInvoice),
          numberCell(c.settlement.profitShareFromCollector),
        ]),
      )
      .join('')
  )
}
