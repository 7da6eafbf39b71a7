// Allocation (or reversal) → wire (docs/api-contract.md, "Funds allocations"). Deterministic: a replay or a
// read of the same stored allocation serialises to exactly the bytes of the original 201.
import type { AllocationEntryAmounts } from '../../domain/types.js'
import type { AllocationView } from '../../services/allocations.js'
import type { AllocationResponse } from '../schemas/allocations.js'

const amounts = (e: AllocationEntryAmounts) => ({
  impactAmount: Number(e.impactAmount),
  impactSalesTaxAmount: Number(e.impactSalesTaxAmount),
  impactSalesTaxRate: Number(e.impactSalesTaxRate),
  serviceFeeAmount: Number(e.serviceFeeAmount),
  serviceFeeSalesTaxAmount: Number(e.serviceFeeSalesTaxAmount),
  serviceFeeSalesTaxRate: Number(e.serviceFeeSalesTaxRate),
})

export function presentAllocation(a: AllocationView): AllocationResponse {
  return {
    fundsAllocationId: a.id,
    ...(a.reversalId ? { reversalId: a.reversalId } : {}),
    quoteId: a.quoteId,
    currencyCode: a.currencyCode,
    credits: a.split.credits.map((e) => ({ projectId: e.projectId, impactPartnerId: e.impactPartnerId, ...amounts(e) })),
    contributions: a.split.contributions.map((e) => ({ impactPartnerId: e.impactPartnerId, ...amounts(e) })),
    taxLiability: a.taxLiability,
    createdAt: a.createdAt.toISOString(),
  }
}
