// Write coalescing for the hot insert paths: rows enqueued during one turn of the event loop are
// written by one multi-row INSERT (one round trip, one commit). Each caller's promise settles only
// when its own row is committed; if a batch fails, its rows are retried one by one so a bad row
// cannot fail its neighbours. Nothing is acknowledged before it is durable.

export class BatchWriter<Row> {
  private pending: { row: Row; resolve: () => void; reject: (error: unknown) => void }[] = []
  private scheduled = false
  private readonly inFlight = new Set<Promise<void>>()

  constructor(
    private readonly writeRows: (rows: readonly Row[]) => Promise<void>,
    private readonly maxBatch = 100,
  ) {}

  write(row: Row): Promise<void> {
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

  private async writeBatch(batch: { row: Row; resolve: () => void; reject: (error: unknown) => void }[]): Promise<void> {
    try {
      await this.writeRows(batch.map((item) => item.row))
      for (const item of batch) item.resolve()
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error)
        return
      }
      await Promise.all(batch.map(async (item) => {
        try {
          await this.writeRows([item.row])
          item.resolve()
        } catch (single) {
          item.reject(single)
        }
      }))
    }
  }
}
