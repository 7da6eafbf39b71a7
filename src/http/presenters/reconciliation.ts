// Impact record → wire (docs/reconciliation.md). Amounts are exact decimal strings at the currency's precision until
// here, and JSON numbers on the wire, like every money field of the API: a string of at most 15 significant digits
// converts to the nearest double and prints back as the same decimal, so nothing is rounded on the way.
import type { ImpactAmounts, ImpactLineAmounts, ImpactRecord } from '../../domain/impact-record.js'
import type { ImpactRecordResponse } from '../schemas/reconciliation.js'

const amounts = (a: ImpactAmounts) => ({
  total: Number(a.total),
  impact: Number(a.impact),
  impactTax: Number(a.impactTax),
  serviceFee: Number(a.serviceFee),
  serviceFeeTax: Number(a.serviceFeeTax),
})

const lineAmounts = (a: ImpactLineAmounts) => ({
  ...amounts(a),
  impactTaxRate: Number(a.impactTaxRate),
  serviceFeeTaxRate: Number(a.serviceFeeTaxRate),
})

export function presentImpactRecord(r: ImpactRecord): ImpactRecordResponse {
  return {
    fundsAllocationId: r.fundsAllocationId,
    ...(r.reversalId !== undefined ? { reversalId: r.reversalId } : {}),
    quoteId: r.quoteId,
    fundsDateTime: r.fundsDateTime,
    consumerReference: r.consumerReference,
    fundsOrganisationId: r.fundsOrganisationId,
    fundsOrganisationReference: r.fundsOrganisationReference,
    collectionOrganisationId: r.collectionOrganisationId,
    fundsCurrencyCode: r.fundsCurrencyCode,
    reversal: r.reversal,
    taxLiability: r.taxLiability,
    amounts: amounts(r.amounts),
    merchant: r.merchant,
    credits: r.credits.map((c) => ({
      impactPartnerId: c.impactPartnerId,
      projectId: c.projectId,
      quantityTonnes: Number(c.quantityTonnes),
      amounts: lineAmounts(c.amounts),
    })),
    contributions: r.contributions.map((c) => ({ impactPartnerId: c.impactPartnerId, amounts: lineAmounts(c.amounts) })),
  }
}
