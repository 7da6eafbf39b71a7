// Who is calling and what they may touch: API key → organisation, and that organisation's subtree.
// Both are cached in-process with a short TTL, so a revoked key stops working within AUTH_CACHE_TTL_MS.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findActiveKeyByHash } from '../db/repositories/api-keys.js'
import { findActiveSubtreeIds } from '../db/repositories/organisations.js'
import { AppError } from '../errors.js'
import { TtlCache } from './ttl-cache.js'

export interface Principal {
  keyId: string
  organisationId: string
  mode: 'live' | 'test'
}

export class AccessResolver {
  private readonly keys: TtlCache<Principal | null>
  private readonly subtrees: TtlCache<ReadonlySet<string>>

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs: number,
    now: () => number = Date.now,
  ) {
    this.keys = new TtlCache(ttlMs, 10_000, now)
    this.subtrees = new TtlCache(ttlMs, 10_000, now)
  }

  /** The principal of a key hash (SHA-256 of the full key), or undefined when unknown or revoked. */
  async authenticate(keyHash: Buffer): Promise<Principal | undefined> {
    const cacheKey = keyHash.toString('hex')
    const cached = this.keys.get(cacheKey)
    if (cached !== undefined) return cached ?? undefined
    const row = await findActiveKeyByHash(this.db, keyHash)
    const principal = row ? { keyId: row.id, organisationId: row.organisation_id, mode: row.mode } : null
    this.keys.set(cacheKey, principal)
    return principal ?? undefined
  }

  /** True when `organisationId` is the caller's organisation or one of its active descendants. */
  async canSee(principal: Principal, organisationId: string): Promise<boolean> {
    if (organisationId === principal.organisationId) return true
    const cached = this.subtrees.get(principal.organisationId)
    if (cached?.has(organisationId)) return true
    // A miss may be a child created moments ago by another instance: read the tree again before refusing.
    const fresh = new Set(await findActiveSubtreeIds(this.db, principal.organisationId))
    this.subtrees.set(principal.organisationId, fresh)
    return fresh.has(organisationId)
  }

  /** For an organisationId named in a request body: outside the caller's tree → 403. */
  async assertCanActOn(principal: Principal, organisationId: string, path = '/organisationId'): Promise<void> {
    if (!(await this.canSee(principal, organisationId))) {
      throw new AppError('FORBIDDEN', 'api key may not act on this organisation', [
        { path, message: "is outside the api key's organisation tree" },
      ])
    }
  }

  forgetSubtrees(): void {
    this.subtrees.clear()
  }
}
