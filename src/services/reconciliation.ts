// Reconciliation (docs/reconciliation.md): the impact records of a key's tree, listed in keyset pages, read one at a
// time, or exported page by page. A record is an allocation or a reversal; records are ordered by (fundsDateTime, id).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findOnReplicaFirst } from '../db/replica.js'
import { findOrganisationById, findRootOrganisationIds } from '../db/repositories/organisations.js'
import {
  findImpactRecordById,
  findImpactRecordPosition,
  findImpactRecords,
  type ImpactRecordFilter,
  type ImpactRecordPosition,
  type StoredImpactRecord,
} from '../db/repositories/impact-records.js'
import { buildImpactRecord, reversalImpactRecord, type ImpactRecord } from '../domain/impact-record.js'
import { AppError, notFound } from '../errors.js'
import { operatorPrincipal, type AccessResolver, type Principal } from './access.js'

export interface ReconciliationDeps {
  /** The primary: reads by id fall back to it (findOnReplicaFirst). */
  readonly db: Kysely<Database>
  /** Pages, exports and reads by id: the read replica when one is configured and caught up (src/db/replica.ts). */
  readonly reads: Kysely<Database>
  /** Authentication and the key's tree: always on the primary. */
  readonly access: AccessResolver
}

/** The list's query parameters, as ekko names them (already schema-checked: ISO date-times, uuids, limit 1–100). */
export interface ImpactRecordQuery {
  dateTimeFrom: string
  dateTimeTo: string
  consumerReference?: string | undefined
  impactPartnerId?: string | undefined
  fundsOrganisationId?: string | undefined
  limit?: number | undefined
  startingAfter?: string | undefined
  endingBefore?: string | undefined
}

export interface ImpactRecordList {
  hasMore: boolean
  data: ImpactRecord[]
}

export const DEFAULT_LIMIT = 10
/** The longest window a list or an export may span. */
export const MAX_WINDOW_DAYS = 366
/** Records read per statement while exporting. */
export const EXPORT_PAGE_SIZE = 1000

const DAY_MS = 86_400_000

/** The impact record of a stored record (a reversal's negated). */
export const impactRecordOf = (stored: StoredImpactRecord): ImpactRecord => {
  const record = buildImpactRecord(stored.source)
  return stored.reversal ? reversalImpactRecord(record, stored.reversal) : record
}

/** What a kind of list adds to the query's filter (profit-share lists: records with lines the reader sees). */
export type RecordSelection = Pick<ImpactRecordFilter, 'profitShareFromLevel'>

/** The window [from, to): both present (schema), both real instants, from < to, at most MAX_WINDOW_DAYS long. */
function windowOf(query: ImpactRecordQuery): { from: Date; to: Date } {
  const from = new Date(query.dateTimeFrom)
  const to = new Date(query.dateTimeTo)
  const details = [
    ...(Number.isNaN(from.getTime()) ? [{ path: '/dateTimeFrom', message: 'must be an ISO 8601 date-time' }] : []),
    ...(Number.isNaN(to.getTime()) ? [{ path: '/dateTimeTo', message: 'must be an ISO 8601 date-time' }] : []),
  ]
  if (details.length > 0) throw new AppError('INVALID_DATE_RANGE', 'dateTimeFrom and dateTimeTo must be ISO 8601 date-times', details)
  if (from.getTime() >= to.getTime()) {
    throw new AppError('INVALID_DATE_RANGE', 'dateTimeFrom must be before dateTimeTo', [
      { path: '/dateTimeFrom', message: 'must be before dateTimeTo (the window is [dateTimeFrom, dateTimeTo))' },
    ])
  }
  if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    throw new AppError('INVALID_DATE_RANGE', `the window may span at most ${MAX_WINDOW_DAYS} days`, [
      { path: '/dateTimeTo', message: `must be at most ${MAX_WINDOW_DAYS} days after dateTimeFrom` },
    ])
  }
  return { from, to }
}

/**
 * The records a query may see: its window and filters, inside the key's tree (or the one organisation it names). The
 * summary (services/summary.ts) applies the same rules.
 */
export async function filterOf(
  deps: Pick<ReconciliationDeps, 'access'>,
  principal: Principal,
  query: ImpactRecordQuery,
  selection: RecordSelection = {},
): Promise<ImpactRecordFilter> {
  const { from, to } = windowOf(query)
  const filters = { from, to, consumerReference: query.consumerReference, impactPartnerId: query.impactPartnerId, ...selection }
  if (query.fundsOrganisationId !== undefined) {
    await deps.access.assertCanActOn(principal, query.fundsOrganisationId, '/fundsOrganisationId')
    return {
      ...filters,
      rootOrganisationId: await deps.access.rootOf(query.fundsOrganisationId),
      organisationIds: [query.fundsOrganisationId],
    }
  }
  const tree = await deps.access.treeOf(principal)
  // A key at the top of its tree sees the whole tree; any other key its own subtree (one organisation: its own index).
  const organisationIds = tree.rootId === principal.organisationId && tree.organisationIds.size > 1 ? undefined : [...tree.organisationIds]
  return { ...filters, rootOrganisationId: tree.rootId, organisationIds }
}

const invalidCursor = (path: string): AppError =>
  new AppError('INVALID_CURSOR', 'cursor is not a record of this list', [{ path, message: "is not a record of the api key's tree" }])

/** A cursor's position; a record that does not exist or that the key may not see is refused alike (nothing revealed). */
async function positionOf(deps: ReconciliationDeps, principal: Principal, id: string, path: string): Promise<ImpactRecordPosition> {
  const position = await findOnReplicaFirst(deps, (db) => findImpactRecordPosition(db, id))
  if (!position || !(await deps.access.canSee(principal, position.organisationId))) throw invalidCursor(path)
  return { time: position.time, id: position.id }
}

/**
 * One page of a key's records: `limit` (default 10) records of the window [dateTimeFrom, dateTimeTo) in
 * (fundsDateTime, id) order, after `startingAfter` or before `endingBefore` (at most one), and whether more follow in
 * the direction read. Reads limit + 1 to know; backward pages are read newest first and flipped. `selection` narrows
 * the records to a kind of list's (the profit-share list reuses this whole reading).
 */
export async function listRecords(
  deps: ReconciliationDeps,
  principal: Principal,
  query: ImpactRecordQuery,
  selection: RecordSelection = {},
): Promise<{ hasMore: boolean; data: StoredImpactRecord[] }> {
  if (query.startingAfter !== undefined && query.endingBefore !== undefined) {
    throw new AppError('INVALID_CURSOR', 'send at most one of startingAfter and endingBefore', [
      { path: '/startingAfter', message: 'cannot be sent with endingBefore' },
      { path: '/endingBefore', message: 'cannot be sent with startingAfter' },
    ])
  }
  const filter = await filterOf(deps, principal, query, selection)
  const limit = query.limit ?? DEFAULT_LIMIT
  const after = query.startingAfter === undefined ? undefined : await positionOf(deps, principal, query.startingAfter, '/startingAfter')
  const before = query.endingBefore === undefined ? undefined : await positionOf(deps, principal, query.endingBefore, '/endingBefore')
  const direction = before ? 'backward' : 'forward'
  const rows = await findImpactRecords(deps.reads, { filter, after, before, direction, limit: limit + 1 })
  const hasMore = rows.length > limit
  const page = rows.slice(0, limit)
  if (direction === 'backward') page.reverse()
  return { hasMore, data: page }
}

export async function listImpactRecords(
  deps: ReconciliationDeps,
  principal: Principal,
  query: ImpactRecordQuery,
): Promise<ImpactRecordList> {
  const page = await listRecords(deps, principal, query)
  return { hasMore: page.hasMore, data: page.data.map(impactRecordOf) }
}

/** One stored record of the key's tree, by allocation id or reversal id; undefined when unknown or outside the tree. */
export async function findRecord(deps: ReconciliationDeps, principal: Principal, id: string): Promise<StoredImpactRecord | undefined> {
  const stored = await findOnReplicaFirst(deps, (db) => findImpactRecordById(db, id))
  if (!stored || !(await deps.access.canSee(principal, stored.source.allocation.organisationId))) return undefined
  return stored
}

/** One record of the key's tree, by allocation id or reversal id; anything else is not found. */
export async function getImpactRecord(deps: ReconciliationDeps, principal: Principal, id: string): Promise<ImpactRecord> {
  const stored = await findRecord(deps, principal, id)
  if (!stored) throw notFound('funds allocation')
  return impactRecordOf(stored)
}

/**
 * Every record of the window and filters, in order, read EXPORT_PAGE_SIZE at a time (keyset, so memory stays one
 * page whatever the window holds). The query is checked before the first record is read: a bad one throws here.
 */
export async function exportRecords(
  deps: ReconciliationDeps,
  principal: Principal,
  query: Omit<ImpactRecordQuery, 'limit' | 'startingAfter' | 'endingBefore'>,
  selection: RecordSelection = {},
  pageSize = EXPORT_PAGE_SIZE,
): Promise<AsyncIterable<StoredImpactRecord>> {
  const filter = await filterOf(deps, principal, query, selection)
  async function* records(): AsyncGenerator<StoredImpactRecord> {
    let after: ImpactRecordPosition | undefined
    for (;;) {
      const rows = await findImpactRecords(deps.reads, { filter, after, direction: 'forward', limit: pageSize })
      yield* rows
      const last = rows.at(-1)
      if (!last || rows.length < pageSize) return
      after = { time: last.time, id: last.id }
    }
  }
  return records()
}

export async function exportImpactRecords(
  deps: ReconciliationDeps,
  principal: Principal,
  query: Omit<ImpactRecordQuery, 'limit' | 'startingAfter' | 'endingBefore'>,
  pageSize = EXPORT_PAGE_SIZE,
): Promise<AsyncIterable<ImpactRecord>> {
  const stored = await exportRecords(deps, principal, query, {}, pageSize)
  async function* records(): AsyncGenerator<ImpactRecord> {
    for await (const record of stored) yield impactRecordOf(record)
  }
  return records()
}

/** The window an operator's export covers, for one organisation's tree or for every tree. */
export interface OperatorExportQuery {
  dateTimeFrom: string
  dateTimeTo: string
  organisationId?: string | undefined
}

/**
 * The operator's export (CLI): what `exportTree` exports for one organisation's tree (it and its descendants), or,
 * without one, for every tree in turn (each tree in time order), as that tree's root. An unknown organisation is
 * NOT_FOUND; the window is checked before anything is read.
 */
export async function exportAsOperator<T>(
  deps: ReconciliationDeps,
  query: OperatorExportQuery,
  exportTree: (operator: Principal, window: { dateTimeFrom: string; dateTimeTo: string }) => Promise<AsyncIterable<T>>,
): Promise<AsyncIterable<T>> {
  windowOf(query)
  if (query.organisationId !== undefined && !(await findOrganisationById(deps.db, query.organisationId))) throw notFound('organisation')
  const roots = query.organisationId !== undefined ? [query.organisationId] : await findRootOrganisationIds(deps.db)
  const operatorOf = (organisationId: string): Principal => operatorPrincipal(organisationId)
  const window = { dateTimeFrom: query.dateTimeFrom, dateTimeTo: query.dateTimeTo }
  async function* records(): AsyncGenerator<T> {
    for (const root of roots) yield* await exportTree(operatorOf(root), window)
  }
  return records()
}

/** The operator's export of impact records (CLI `report allocations`). */
export function exportImpactRecordsAsOperator(deps: ReconciliationDeps, query: OperatorExportQuery): Promise<AsyncIterable<ImpactRecord>> {
  return exportAsOperator(deps, query, (operator, window) => exportImpactRecords(deps, operator, window))
}
