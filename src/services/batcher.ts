// Coalescing for the hot database paths: items submitted during one turn of the event loop go to the
// database together, in one statement (one round trip; for writes, one commit). Each caller's promise
// settles only when the statement holding its item has completed, so nothing is acknowledged before it
// is durable; if a batch fails, its items are retried one by one so a bad item cannot fail its neighbours.

interface Pending<Row, Result> {
  row: Row
  resolve: (result: Result) => void
  reject: (error: unknown) => void
}

export class Batcher<Row, Result = void> {
  private pending: Pending<Row, Result>[] = []
  private scheduled = false
  private readonly inFlight = new Set<Promise<void>>()

  /** `writeRows` handles all items in one statement and returns one result per item, in order. */
  constructor(
    private readonly writeRows: (rows: readonly Row[]) => Promise<readonly Result[]>,
    private readonly maxBatch = 100,
  ) {}

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
    this.flush()
    await Promise.allSettled([...this.inFlight])
  }

  private flush(): void {
    this.scheduled = false
    const batch = this.pending
    if (batch.length === 0) return
    this.pending = []
    const done = this.writeBatch(batch).finally(() => this.inFlight.delete(done))
    this.inFlight.add(done)
  }

  private async writeBatch(batch: Pending<Row, Result>[]): Promise<void> {
    try {
      const results = await this.writeRows(batch.map((item) => item.row))
      batch.forEach((item, i) => item.resolve(results[i] as Result))
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error)
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
