// Where quotes are kept: concurrent inserts (with the sessions some of them back) are coalesced into one statement, each catalogue snapshot is
// written at most once per process, and recent quotes are served from memory (a stored quote never changes).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { insertQuotes, type QuoteWrite } from '../db/repositories/quote-writes.js'
import { findQuoteById, type Quote } from '../db/repositories/quotes.js'
import type { Session } from '../db/repositories/sessions.js'
import { Batcher } from './batcher.js'
import { createCache, type Cache } from './cache.js'

export class QuoteStore {
  private readonly recent: Cache<Quote>
  /** Snapshot ids this process has seen committed; the others go with the next insert (ON CONFLICT DO NOTHING). */
  private readonly storedSnapshots = createCache<true>({ max: 10_000 })
  private readonly writer: Batcher<QuoteWrite>
  private readonly isStored = (snapshotId: string): boolean => this.storedSnapshots.get(snapshotId) === true

  constructor(
    private readonly db: Kysely<Database>,
    cacheSize: number,
  ) {
    this.recent = createCache({ max: cacheSize })
    this.writer = new Batcher(async (writes) => {
      this.remember(await insertQuotes(this.db, writes, this.isStored))
      return writes.map((): void => undefined)
    })
  }

  private remember(snapshotIds: readonly string[]): void {
    for (const id of snapshotIds) this.storedSnapshots.set(id, true)
  }

  /** Resolves once the quote is committed. */
  async save(quote: Quote): Promise<void> {
    await this.writer.submit({ quote, session: null })
    this.recent.set(quote.id, quote)
  }

  /** The quote and the session it backs, in the same statement (and with concurrent quotes and sessions). */
  async saveWithSession(quote: Quote, session: Session): Promise<void> {
    await this.writer.submit({ quote, session })
    this.recent.set(quote.id, quote)
  }

  /** A quote this process keeps (written or read recently), or undefined: then `find`. */
  cached(id: string): Quote | undefined {
    return this.recent.get(id)
  }

  async find(id: string): Promise<Quote | undefined> {
    const cached = this.recent.get(id)
    if (cached) return cached
    const quote = await findQuoteById(this.db, id)
    if (quote) this.recent.set(id, quote)
    return quote
  }

  /** Resolves once every insert submitted so far has settled. */
  drain(): Promise<void> {
    return this.writer.drain()
  }
}
