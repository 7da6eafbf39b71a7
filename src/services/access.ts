// Who is calling and what they may touch: API key → organisation, and that organisation's subtree.
// Both are cached in-process with a short TTL, so a revoked key stops working within AUTH_CACHE_TTL_MS. A key's
// expiry (set by rotation) is cached with it and checked on every request, so a known expiry is exact.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findKeyForAuthentication } from '../db/repositories/api-keys.js'
import { findActiveSubtreeIds, findOrganisationChain, findOrganisationRootId } from '../db/repositories/organisations.js'
import type { ChainLink } from '../domain/profit-share.js'
import { AppError } from '../errors.js'
import { createCache, type Cache } from './cache.js'

export interface Principal {
  keyId: string
  organisationId: string
  mode: 'live' | 'test'
}

/** A resolved key: its principal and when it stops working (ms since the epoch; undefined = until revoked). */
interface KeyEntry {
  principal: Principal
  expiresAt: number | undefined
}

export class AccessResolver {
  // A key that is unknown or revoked is cached too (as false), so a flood of bad keys costs one lookup each per TTL.
  private readonly keys: Cache<KeyEntry | false>
  private readonly subtrees: Cache<ReadonlySet<string>>
  // An organisation's parent never changes, so neither does the top of its tree, nor its chain up to it.
  private readonly roots = createCache<string>({ max: 10_000 })
  private readonly chains = createCache<readonly ChainLink[]>({ max: 10_000 })

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = createCache({ max: 10_000, ttlMs, now })
    this.subtrees = createCache({ max: 10_000, ttlMs, now })
  }

  /** The principal of a key hash (SHA-256 of the full key), or undefined when unknown, revoked or expired. */
  async authenticate(keyHash: Buffer): Promise<Principal | undefined> {
    const cacheKey = keyHash.toString('hex')
    let entry = this.keys.get(cacheKey)
    if (entry === undefined) {
      const key = await findKeyForAuthentication(this.db, keyHash)
      entry = key
        ? { principal: { keyId: key.id, organisationId: key.organisationId, mode: key.mode }, expiresAt: key.expiresAt?.getTime() }
        : false
      this.keys.set(cacheKey, entry)
    }
    if (!entry || (entry.expiresAt !== undefined && entry.expiresAt <= this.now())) return undefined
    return entry.principal
  }

  /** Drops a key from this process's cache (after it was rotated or revoked here). Other processes follow within the TTL. */
  forgetKey(keyHash: Uint8Array): void {
    this.keys.delete(Buffer.from(keyHash).toString('hex'))
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

  /**
   * What a key may read, for lists across its tree: the top of the tree it sits in, and its organisation with its
   * active descendants (cached like canSee's; a child created moments ago shows up within the TTL).
   */
  async treeOf(principal: Principal): Promise<{ rootId: string; organisationIds: ReadonlySet<string> }> {
    let organisationIds = this.subtrees.get(principal.organisationId)
    if (organisationIds === undefined) {
      organisationIds = new Set(await findActiveSubtreeIds(this.db, principal.organisationId))
      this.subtrees.set(principal.organisationId, organisationIds)
    }
    return { rootId: await this.rootOf(principal.organisationId), organisationIds }
  }

  /** The top of an organisation's tree (cached: it never changes). */
  async rootOf(organisationId: string): Promise<string> {
    let rootId = this.roots.get(organisationId)
    if (rootId === undefined) {
      rootId = (await findOrganisationRootId(this.db, organisationId)) ?? organisationId
      this.roots.set(organisationId, rootId)
    }
    return rootId
  }

  /**
   * An organisation's chain, root first and the organisation last, with each one's reference (cached: parents and
   * references never change). Its length − 1 is the organisation's depth in the tree; [] for an unknown one.
   */
  async chainOf(organisationId: string): Promise<readonly ChainLink[]> {
    let chain = this.chains.get(organisationId)
    if (chain === undefined) {
      chain = (await findOrganisationChain(this.db, organisationId)).map((o) => ({ id: o.id, reference: o.organisationReference }))
      if (chain.length > 0) this.chains.set(organisationId, chain)
    }
    return chain
  }

  forgetSubtrees(): void {
    this.subtrees.clear()
  }
}
