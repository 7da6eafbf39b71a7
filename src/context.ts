// What route plugins and services receive: configuration, database, clock and the shared caches.
import type { Config } from './config.js'
import type { DatabaseHandle } from './db/connect.js'
import type { NewQuoteRow } from './db/database.js'
import { insertQuotes } from './db/repositories/quotes.js'
import { AccessResolver } from './services/access.js'
import { BatchWriter } from './services/batch-writer.js'
import { QuoteCache } from './services/quotes.js'
import { ReferenceDataCache } from './services/reference-data.js'

export type Clock = () => Date

export interface AppContext {
  readonly config: Config
  readonly database: DatabaseHandle
  readonly clock: Clock
  readonly access: AccessResolver
  readonly reference: ReferenceDataCache
  readonly quotes: QuoteCache
  /** Coalesces concurrent quote inserts into multi-row INSERTs. */
  readonly quoteWriter: BatchWriter<NewQuoteRow>
}

export function createContext(config: Config, database: DatabaseHandle, clock: Clock = () => new Date()): AppContext {
  return {
    config,
    database,
    clock,
    access: new AccessResolver(database.db, config.AUTH_CACHE_TTL_MS, () => clock().getTime()),
    reference: new ReferenceDataCache(database.db, config.CATALOGUE_CACHE_TTL_MS, () => clock().getTime()),
    quotes: new QuoteCache(),
    quoteWriter: new BatchWriter((rows) => insertQuotes(database.db, rows)),
  }
}
