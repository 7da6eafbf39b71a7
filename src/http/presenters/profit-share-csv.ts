// Profit-share records → CSV (docs/reconciliation.md, "Profit share"): the impact CSV's conventions (RFC 4180, CRLF,
// formula-safe text cells, amounts exactly as stored), one row per profit-share line the reader sees.
import type { ProfitShareRecord } from '../../domain/profit-share.js'
import { csvChunksOf, numberCell, row, textCell } from './reconciliation-csv.js'

export const PROFIT_SHARE_CSV_COLUMNS = [
  'recordId',
  'fundsAllocationId',
  'reversalId',
  'reversal',
  'fundsDateTime',
  'quoteId',
  'consumerReference',
  'fundsOrganisationId',
  'fundsOrganisationReference',
  'billingOrganisationId',
  'merchantName',
  'merchantMcc',
  'fundsCurrencyCode',
  'taxLiability',
  'settlementModel',
  'serviceFee',
  'platformProfitShare',
  'beneficiaryOrganisationId',
  'beneficiaryOrganisationReference',
  'fundsProfitShare',
  'billingCurrencyCode',
  'billingCurrencyExchangeRate',
  'profitShare',
  'profitShareTax',
  'profitShareTaxRate',
] as const

/** The CSV rows of one record: one per profit-share line. */
export function profitShareCsvRows(record: ProfitShareRecord): string {
  const common = [
    textCell(record.reversalId ?? record.fundsAllocationId),
    textCell(record.fundsAllocationId),
    textCell(record.reversalId),
    record.reversal ? 'true' : 'false',
    textCell(record.fundsDateTime),
    textCell(record.quoteId),
    textCell(record.consumerReference),
    textCell(record.fundsOrganisationId),
    textCell(record.fundsOrganisationReference),
    textCell(record.billingOrganisationId),
    textCell(record.merchant.name),
    textCell(record.merchant.mcc),
    textCell(record.fundsCurrencyCode),
    textCell(record.taxLiability),
    textCell(record.settlementModel),
    numberCell(record.amounts.serviceFee),
    record.platformProfitShare === null ? '' : numberCell(record.platformProfitShare),
  ]
  return record.profitShareAllocations
    .map((line) =>
      row([
        ...common,
        textCell(line.beneficiaryOrganisationId),
        textCell(line.beneficiaryOrganisationReference),
        numberCell(line.fundsProfitShare),
        textCell(line.billingCurrencyCode),
        numberCell(line.billingCurrencyExchangeRate),
        numberCell(line.amounts.profitShare),
        numberCell(line.amounts.profitShareTax),
        numberCell(line.amounts.profitShareTaxRate),
      ]),
    )
    .join('')
}

export const profitShareCsvChunks = (records: AsyncIterable<ProfitShareRecord>): AsyncGenerator<string> =>
  csvChunksOf(row([...PROFIT_SHARE_CSV_COLUMNS]), records, profitShareCsvRows)
