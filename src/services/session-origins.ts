// Which web origins may read a session in a browser (CORS): the allowed origins in force for the session's
// organisation. Looked up by session id in one query and cached briefly, so that a preflight and the read after
// it cost one lookup. An unknown session is cached and answered like a session whose organisation allows no
// origin: the same query, the same answer.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findEffectiveAllowedOrigins } from '../db/repositories/organisations.js'
import { createLoadingCache, type LoadingCache } from './cache.js'

export class SessionOrigins {
  private readonly origins: LoadingCache<readonly string[]>

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs: number,
    now: () => number = Date.now,
  ) {
    this.origins = createLoadingCache({ max: 10_000, ttlMs, now })
  }

  /** True when `origin` (the request's Origin header, verbatim) may read session `sessionId`. */
  async allows(sessionId: string, origin: string): Promise<boolean> {
    const allowed = await this.origins.get(sessionId, () => findEffectiveAllowedOrigins(this.db, { sessionId }))
    // Stored origins are normalised, and browsers send the Origin header in that same form: compared exactly.
    return allowed.includes(origin)
  }

  /** Forgets every cached answer (an organisation's list changed in this process). */
  forget(): void {
    this.origins.clear()
  }
}
