// Organisation → wire (docs/api-contract.md, "Organisations").
import { Decimal } from '../../domain/money.js'
import type { OrganisationView } from '../../services/organisations.js'
import type { OrganisationResponse } from '../schemas/organisations.js'

export const presentOrganisation = (org: OrganisationView): OrganisationResponse => ({
  organisationId: org.id,
  parentOrganisationId: org.parentId,
  organisationReference: org.organisationReference,
  tradingName: org.tradingName,
  legalName: org.legalName,
  address: org.address,
  currencyCode: org.currencyCode,
  website: org.website,
  mcc: org.mcc,
  serviceFeePercentage: Number(org.serviceFeeRate),
  taxLiability: org.taxLiability,
  relativeProfitShare: Number(org.relativeProfitShare),
  // Exact, but a deep chain has more decimals than a JSON number holds: 10, like every rate on the wire.
  proportionalProfitShare: new Decimal(org.proportionalProfitShare).toDecimalPlaces(10, Decimal.ROUND_HALF_UP).toNumber(),
  billing: org.billing && { ...org.billing },
  settlementModel: org.effectiveSettlementModel,
  status: { value: org.status, message: null },
  createdAt: org.createdAt.toISOString(),
  allowedOrigins: org.allowedOrigins && [...org.allowedOrigins],
  ipAllowlist: org.ipAllowlist && { enabled: org.ipAllowlist.enabled, entries: [...org.ipAllowlist.entries] },
  requireSecondFactor: org.requireTotp,
})
