// Profit-share records (docs/reconciliation.md, "Profit share"): ekko's profit-share recon records, listed, read and
// exported exactly as the impact records are (src/services/reconciliation.ts does the reading: same window, filters,
// keyset pages and errors), narrowed to the records with profit-share lines the reader may see. A beneficiary sees
// its own lines and those of the beneficiaries below it in its tree; the tree's root (and the operator) every line.
import type { StoredImpactRecord } from '../db/repositories/impact-records.js'
import { buildProfitShareRecord, reverseProfitShare, type ProfitShareRecord } from '../domain/profit-share.js'
import { notFound } from '../errors.js'
import type { Principal } from './access.js'
import {
  exportAsOperator,
  exportRecords,
  findRecord,
  impactRecordOf,
  listRecords,
  type ImpactRecordQuery,
  type OperatorExportQuery,
  type ReconciliationDeps,
} from './reconciliation.js'

/** The impact list's parameters minus consumerReference and impactPartnerId (as ekko's profit-share list). */
export type ProfitShareRecordQuery = Omit<ImpactRecordQuery, 'consumerReference' | 'impactPartnerId'>

export interface ProfitShareRecordList {
  hasMore: boolean
  data: ProfitShareRecord[]
}

/** The depth of the reader's organisation in its tree: it sees the lines of beneficiaries at that depth or deeper. */
async function readerLevel(deps: ReconciliationDeps, principal: Principal): Promise<number> {
  return Math.max(0, (await deps.access.chainOf(principal.organisationId)).length - 1)
}

/** The record of a stored allocation or reversal with profit share, as a reader at `level` sees it. */
async function recordOf(deps: ReconciliationDeps, stored: StoredImpactRecord, level: number): Promise<ProfitShareRecord> {
  const split = stored.profitShare
  if (split === null) throw new Error(`record ${stored.id} has no profit share`)
  const chain = await deps.access.chainOf(stored.source.allocation.organisationId)
  return buildProfitShareRecord(impactRecordOf(stored), stored.reversal ? reverseProfitShare(split) : split, chain, level)
}

export async function listProfitShareRecords(
  deps: ReconciliationDeps,
  principal: Principal,
  query: ProfitShareRecordQuery,
): Promise<ProfitShareRecordList> {
  const level = await readerLevel(deps, principal)
  const page = await listRecords(deps, principal, query, { profitShareFromLevel: level })
  return { hasMore: page.hasMore, data: await Promise.all(page.data.map((stored) => recordOf(deps, stored, level))) }
}

/** One record by allocation id or reversal id: of the key's tree, with a line the key may see; anything else is not found. */
export async function getProfitShareRecord(deps: ReconciliationDeps, principal: Principal, id: string): Promise<ProfitShareRecord> {
  const stored = await findRecord(deps, principal, id)
  const level = await readerLevel(deps, principal)
  if (!stored?.profitShare?.lines.some((line) => line.level >= level)) throw notFound('profit-share record')
  return recordOf(deps, stored, level)
}

async function exportAtLevel(
  deps: ReconciliationDeps,
  principal: Principal,
  query: Omit<ProfitShareRecordQuery, 'limit' | 'startingAfter' | 'endingBefore'>,
  level: number,
): Promise<AsyncIterable<ProfitShareRecord>> {
  const stored = await exportRecords(deps, principal, query, { profitShareFromLevel: level })
  async function* records(): AsyncGenerator<ProfitShareRecord> {
    for await (const record of stored) yield await recordOf(deps, record, level)
  }
  return records()
}

/** Every record of the window, in order, a page at a time (the impact export's reading). A bad query throws here. */
export async function exportProfitShareRecords(
  deps: ReconciliationDeps,
  principal: Principal,
  query: Omit<ProfitShareRecordQuery, 'limit' | 'startingAfter' | 'endingBefore'>,
): Promise<AsyncIterable<ProfitShareRecord>> {
  return exportAtLevel(deps, principal, query, await readerLevel(deps, principal))
}

/** The operator's export (CLI `report profit-share`): every line of one organisation's tree, or of every tree. */
export function exportProfitShareRecordsAsOperator(
  deps: ReconciliationDeps,
  query: OperatorExportQuery,
): Promise<AsyncIterable<ProfitShareRecord>> {
  return exportAsOperator(deps, query, (operator, window) => exportAtLevel(deps, operator, window, 0))
}
