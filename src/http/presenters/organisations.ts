// Organisation → wire (docs/api-contract.md, "Organisations").
import type { Organisation } from '../../db/repositories/organisations.js'
import type { OrganisationResponse } from '../schemas/organisations.js'

export const presentOrganisation = (org: Organisation): OrganisationResponse => ({
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
  status: { value: org.status, message: null },
  createdAt: org.createdAt.toISOString(),
  allowedOrigins: org.allowedOrigins && [...org.allowedOrigins],
  ipAllowlist: org.ipAllowlist && { enabled: org.ipAllowlist.enabled, entries: [...org.ipAllowlist.entries] },
  requireSecondFactor: org.requireTotp,
})
