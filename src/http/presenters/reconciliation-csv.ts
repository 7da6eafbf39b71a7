// Impact records → CSV for spreadsheets (docs/reconciliation.md, "CSV"): RFC 4180 (CRLF, every field that needs it
// quoted, quotes doubled), one row per credit or contribution line, UTC timestamps, amounts exactly as stored at the
// currency's precision. A text cell a spreadsheet would run as a formula (= + - @, tab, CR) gets a leading ', while
// amounts stay plain numbers, negative ones included.
import type { ImpactLineAmounts, ImpactRecord } from '../../domain/impact-record.js'

export const CSV_COLUMNS = [
  'recordId',
  'fundsAllocationId',
  'reversalId',
  'reversal',
  'fundsDateTime',
  'quoteId',
  'consumerReference',
  'fundsOrganisationId',
  'fundsOrganisationReference',
  'collectionOrganisationId',
  'merchantName',
  'merchantMcc',
  'fundsCurrencyCode',
  'taxLiability',
  'lineType',
  'impactPartnerId',
  'projectId',
  'quantityTonnes',
  'total',
  'impact',
  'impactTax',
  'impactTaxRate',
  'serviceFee',
  'serviceFeeTax',
  'serviceFeeTaxRate',
] as const

/** A text cell: neutralised if a spreadsheet would read it as a formula, then quoted if RFC 4180 needs it. */
export function textCell(value: string | null | undefined): string {
  if (value === null || value === undefined || value === '') return ''
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/** A number cell: our own decimal strings ("-12.60"), written as they are. */
export const numberCell = (value: string): string => {
  if (!/^-?\d+(\.\d+)?$/.test(value)) throw new Error(`not a decimal: ${value}`)
  return value
}

export const row = (cells: readonly string[]): string => `${cells.join(',')}\r\n`

export const csvHeader = (): string => row([...CSV_COLUMNS])

/** The CSV rows of one record: one per credit line, then one per contribution line. */
export function csvRows(record: ImpactRecord): string {
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
    textCell(record.collectionOrganisationId),
    textCell(record.merchant.name),
    textCell(record.merchant.mcc),
    textCell(record.fundsCurrencyCode),
    textCell(record.taxLiability),
  ]
  const amounts = (a: ImpactLineAmounts) => [
    numberCell(a.total),
    numberCell(a.impact),
    numberCell(a.impactTax),
    numberCell(a.impactTaxRate),
    numberCell(a.serviceFee),
    numberCell(a.serviceFeeTax),
    numberCell(a.serviceFeeTaxRate),
  ]
  return (
    record.credits
      .map((c) =>
        row([...common, 'credit', textCell(c.impactPartnerId), textCell(c.projectId), numberCell(c.quantityTonnes), ...amounts(c.amounts)]),
      )
      .join('') +
    record.contributions.map((c) => row([...common, 'contribution', textCell(c.impactPartnerId), '', '', ...amounts(c.amounts)])).join('')
  )
}

/** The whole CSV as chunks: the header, then the rows of each record, a few hundred records per chunk. */
export function csvChunks(records: AsyncIterable<ImpactRecord>, recordsPerChunk = 200): AsyncGenerator<string> {
  return csvChunksOf(csvHeader(), records, csvRows, recordsPerChunk)
}

/** Any record CSV as chunks: `header`, then `rowsOf` each record, a few hundred records per chunk. */
export async function* csvChunksOf<R>(
  header: string,
  records: AsyncIterable<R>,
  rowsOf: (record: R) => string,
  recordsPerChunk = 200,
): AsyncGenerator<string> {
  let chunk = header
  let n = 0
  for await (const record of records) {
    chunk += rowsOf(record)
    if (++n % recordsPerChunk === 0) {
      yield chunk
      chunk = ''
    }
  }
  if (chunk !== '') yield chunk
}
