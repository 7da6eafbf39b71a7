// What route plugins and services receive: configuration, database, clock and the shared caches.
import type { Config } from './config.js'
import type { DatabaseHandle } from './db/connect.js'
import { AccessResolver } from './services/access.js'

export type Clock = () => Date

export interface AppContext {
  readonly config: Config
  readonly database: DatabaseHandle
  readonly clock: Clock
  readonly access: AccessResolver
}

export function createContext(config: Config, database: DatabaseHandle, clock: Clock = () => new Date()): AppContext {
  return {
    config,
    database,
    clock,
    access: new AccessResolver(database.db, config.AUTH_CACHE_TTL_MS, () => clock().getTime()),
  }
}
