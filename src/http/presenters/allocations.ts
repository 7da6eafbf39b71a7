// Allocation → its exact wire body (spec 2.7 + quoteId, createdAt; reversals add reversalId). The
// string is stored with the allocation and replayed byte for byte.
import type { PresentableAllocation } from '../../services/allocations.js'

const amounts = (e: {
  impactAmount: string
  impactSalesTaxAmount: string
  impactSalesTaxRate: string
  serviceFeeAmount: string
  serviceFeeSalesTaxAmount: string
  serviceFeeSalesTaxRate: string
}) => ({
  impactAmount: Number(e.impactAmount),
  impactSalesTaxAmount: Number(e.impactSalesTaxAmount),
  impactSalesTaxRate: Number(e.impactSalesTaxRate),
  serviceFeeAmount: Number(e.serviceFeeAmount),
  serviceFeeSalesTaxAmount: Number(e.serviceFeeSalesTaxAmount),
  serviceFeeSalesTaxRate: Number(e.serviceFeeSalesTaxRate),
})

export function presentAllocation(a: PresentableAllocation): string {
  return JSON.stringify({
    fundsAllocationId: a.id,
    ...(a.reversalId ? { reversalId: a.reversalId } : {}),
    quoteId: a.quoteId,
    currencyCode: a.currencyCode,
    credits: a.split.credits.map((e) => ({ projectId: e.projectId, impactPartnerId: e.impactPartnerId, ...amounts(e) })),
    contributions: a.split.contributions.map((e) => ({ impactPartnerId: e.impactPartnerId, ...amounts(e) })),
    taxLiability: a.taxLiability,
    createdAt: a.createdAt.toISOString(),
  })
}
