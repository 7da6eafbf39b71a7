// What the reconciliation-style lists share (impact records, profit-share records): a window of Date-able bounds,
// and keyset pages whose cursor is a record's id — the reversal's id for a reversal's record — in either direction.
import { PagePromise, type Page } from '../pagination.js'

/** A query with its window [dateTimeFrom, dateTimeTo) as ISO strings or Dates. */
export type WindowParams<Q> = Omit<Q, 'dateTimeFrom' | 'dateTimeTo'> & {
  dateTimeFrom: string | Date
  dateTimeTo: string | Date
}

/** The same for a list, whose page size (limit) is a number. */
export type WindowListParams<Q> = WindowParams<Omit<Q, 'limit'>> & { limit?: number }

interface RecordLike {
  fundsAllocationId: string
  reversalId?: string | null
}

/** A record's cursor: a reversal's record is addressed by its reversalId. */
const recordId = (record: RecordLike): string => record.reversalId ?? record.fundsAllocationId

/**
 * Pages of records from `fetchPage(cursorQuery)`, forwards from `startingAfter` or backwards from `endingBefore`
 * (whichever `params` holds); `cursorQuery` is empty for the first page.
 */
export function recordPages<Item extends RecordLike, P extends Page<Item>>(
  params: { endingBefore?: string },
  fetchPage: (cursorQuery: { startingAfter?: string; endingBefore?: string }) => Promise<P>,
): PagePromise<Item, P> {
  const backwards = params.endingBefore !== undefined
  return new PagePromise<Item, P>({
    backwards,
    fetch: (cursor) => fetchPage(cursor === undefined ? {} : backwards ? { endingBefore: cursor } : { startingAfter: cursor }),
    next: (page) => {
      const edge = backwards ? page.data[0] : page.data[page.data.length - 1]
      return edge && recordId(edge)
    },
  })
}
