// Impact record → wire (docs/reconciliation.md). Amounts are exact decimal strings at the currency's precision until
// here, and JSON numbers on the wire, like every money field of the API: a string of at most 15 significant digits
// converts to the nearest double and prints back as the same decimal, so nothing is rounded on the way. The wire form
// is built in one place, impactRecordData, which lives with the webhook events because an event stores it when the
// allocation is written: a read and an event's data are the same bytes.
import type { ImpactRecord } from '../../domain/impact-record.js'
import type { ProfitShareRecord } from '../../domain/profit-share.js'
import { impactRecordData } from '../../services/webhooks/events.js'
import type { ImpactRecordResponse, ProfitShareRecordResponse } from '../schemas/reconciliation.js'

export const presentImpactRecord = (record: ImpactRecord): ImpactRecordResponse => impactRecordData(record) as ImpactRecordResponse

const amountsOnWire = (a: ImpactRecord['amounts']) => ({
  total: Number(a.total),
  impact: Number(a.impact),
  impactTax: Number(a.impactTax),
  serviceFee: Number(a.serviceFee),
  serviceFeeTax: Number(a.serviceFeeTax),
})

/** A profit-share record on the wire: the same conversion of exact decimal strings to JSON numbers, at the very end. */
export const presentProfitShareRecord = (r: ProfitShareRecord): ProfitShareRecordResponse => ({
  fundsAllocationId: r.fundsAllocationId,
  ...(r.reversalId !== undefined ? { reversalId: r.reversalId } : {}),
  quoteId: r.quoteId,
  fundsDateTime: r.fundsDateTime,
  consumerReference: r.consumerReference,
  fundsOrganisationId: r.fundsOrganisationId,
  fundsOrganisationReference: r.fundsOrganisationReference,
  billingOrganisationId: r.billingOrganisationId,
  fundsCurrencyCode: r.fundsCurrencyCode,
  reversal: r.reversal,
  taxLiability: r.taxLiability,
  amounts: amountsOnWire(r.amounts),
  merchant: { name: r.merchant.name, mcc: r.merchant.mcc },
  settlementModel: r.settlementModel,
  platformProfitShare: r.platformProfitShare === null ? null : Number(r.platformProfitShare),
  profitShareAllocations: r.profitShareAllocations.map((a) => ({
    beneficiaryOrganisationId: a.beneficiaryOrganisationId,
    beneficiaryOrganisationReference: a.beneficiaryOrganisationReference,
    billingCurrencyCode: a.billingCurrencyCode,
    billingCurrencyExchangeRate: Number(a.billingCurrencyExchangeRate),
    fundsProfitShare: Number(a.fundsProfitShare),
    amounts: {
      profitShare: Number(a.amounts.profitShare),
      profitShareTax: Number(a.amounts.profitShareTax),
      profitShareTaxRate: Number(a.amounts.profitShareTaxRate),
    },
  })),
})
