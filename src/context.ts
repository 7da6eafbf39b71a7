// What route plugins and services receive: configuration, database, clock and the shared caches.
import type { Config } from './config.js'
import type { DatabaseHandle } from './db/connect.js'
import { findAllocationsByKeys, insertAllocations, type NewAllocation } from './db/repositories/allocations.js'
import { insertQuotes, type QuoteWrite } from './db/repositories/quotes.js'
import { AccessResolver } from './services/access.js'
import { Batcher } from './services/batcher.js'
import { KnownSnapshots } from './services/quote-snapshots.js'
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
  readonly quoteWriter: Batcher<QuoteWrite>
  /** Quote snapshots known to be stored (written once per process at most). */
  readonly snapshots: KnownSnapshots
  /** Coalesces concurrent allocation inserts (those without a tax receipt); resolves to "was written". */
  readonly allocationWriter: Batcher<NewAllocation, boolean>
  /** Coalesces concurrent Idempotency-Key lookups into one query. */
  readonly allocationKeys: Batcher<
    { organisationId: string; idempotencyKey: string },
    { requestHash: Buffer; response: string } | undefined
  >
}

export function createContext(config: Config, database: DatabaseHandle, clock: Clock = () => new Date()): AppContext {
  return {
    config,
    database,
    clock,
    access: new AccessResolver(database.db, config.AUTH_CACHE_TTL_MS, () => clock().getTime()),
    reference: new ReferenceDataCache(database.db, config.CATALOGUE_CACHE_TTL_MS, () => clock().getTime()),
    quotes: new QuoteCache(config.QUOTE_CACHE_SIZE),
    quoteWriter: new Batcher((writes) => insertQuotes(database.db, writes)),
    snapshots: new KnownSnapshots(),
    allocationWriter: new Batcher((rows) => insertAllocations(database.db, rows)),
    allocationKeys: new Batcher((pairs) => findAllocationsByKeys(database.db, pairs)),
  }
}
