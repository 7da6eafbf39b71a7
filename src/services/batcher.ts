// Coalescing for the hot database paths: items submitted during one turn of the event loop go to the
// database together, in one statement (one round trip; for writes, one commit). Each caller's promise
// settles only when the statement holding its item has completed, so nothing is acknowledged before it
// is durable; if a batch fails, its items are retried one by one so a bad item cannot fail its neighbours
// (unless the link to the database failed, which no item caused).
import { isConnectionFailure } from '../db/failures.js'

interface Pending<Row, Result> {
  row: Row
  resolve: (result: Result) => void
  reject: (error: unknown) => void
}

export class Batcher<Row, Result = void> {
  private pending: Pending<Row, Result>[] = []
  private scheduled = false
  private readonly inFlight = new Set<Promise<void>>()

  private readonly maxBatch: number
  private readonly maxInFlight: number

  /**
   * `writeRows` handles all items in one statement and returns one result per item, in order. With `maxInFlight`,
   * no more batches than that run at once: items arriving meanwhile wait for the next one, so that under load they
   * share it (and its commit) instead of each paying one of their own. A failed batch's one-by-one retry counts as
   * its batch (its items' statements run together, within its slot).
   */
  constructor(
    private readonly writeRows: (rows: readonly Row[]) => Promise<readonly Result[]>,
    options: { maxBatch?: number; maxInFlight?: number } = {},
  ) {
    this.maxBatch = options.maxBatch ?? 100
    this.maxInFlight = options.maxInFlight ?? Infinity
  }

  submit(row: Row): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.pending.push({ row, resolve, reject })
      if (this.pending.length >= this.maxBatch) this.flush()
      else if (!this.scheduled) {
        this.scheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  /** Resolves once everything enqueued so far has been written (or has failed). */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.inFlight.size > 0) {
      this.flush()
      await Promise.allSettled([...this.inFlight])
    }
  }

  private flush(): void {
    this.scheduled = false
    while (this.pending.length > 0 && this.inFlight.size < this.maxInFlight) {
      const batch = this.pending.splice(0, this.maxBatch)
      const done = this.writeBatch(batch).finally(() => {
        this.inFlight.delete(done)
        // What waited for a free statement goes now.
        this.flush()
      })
      this.inFlight.add(done)
    }
  }

  private async writeBatch(batch: Pending<Row, Result>[]): Promise<void> {
    try {
      const results = await this.writeRows(batch.map((item) => item.row))
      batch.forEach((item, i) => item.resolve(results[i] as Result))
    } catch (error) {
      // One by one only when an item may be at fault: a lost or silent link fails them all alike, and trying each
      // again would keep its caller waiting for another bound before the same answer.
      if (batch.length === 1 || isConnectionFailure(error)) {
        for (const item of batch) item.reject(error)
        return
      }
      await Promise.all(
        batch.map(async (item) => {
          try {
            const [result] = await this.writeRows([item.row])
            item.resolve(result as Result)
          } catch (single) {
            item.reject(single)
          }
        }),
      )
    }
  }
}
