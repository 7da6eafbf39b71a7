// Who is calling and what they may touch. A caller is an API key or a Hub user (src/services/hub/*), each acting on
// an organisation and its active descendants. Keys and subtrees are cached in-process with a short TTL, so a
// revoked key stops working within AUTH_CACHE_TTL_MS. A key's expiry (set by rotation) is cached with it and checked
// on every request, so a known expiry is exact. The IP allowlist in force for a key's organisation is cached alike.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findKeyForAuthentication, touchKeyLastUsed, type AuthenticatedKey, type KeyMode } from '../db/repositories/api-keys.js'
import {
  findActiveSubtreeIds,
  findEffectiveIpAllowlist,
  findOrganisationChain,
  findOrganisationRootId,
  findSubtreeOrganisations,
} from '../db/repositories/organisations.js'
import { compileIpAllowlist } from '../domain/ip-allowlist.js'
import { isPermitted, type Permission, type Role } from '../domain/permissions.js'
import type { ChainLink } from '../domain/profit-share.js'
import { AppError } from '../errors.js'
import { createCache, createLoadingCache, type LoadingCache } from './cache.js'

/** Who acts: recorded with every change in the audit log. */
export type Actor =
  | { type: 'apiKey'; id: string; label: string }
  | { type: 'user'; id: string; label: string; role: Role; sessionId: string }
  | { type: 'operator'; id: null; label: string }

/** The caller of a request use case. */
export interface Principal {
  /** The organisation whose tree the caller acts on: the key's, or the Hub user's. */
  organisationId: string
  /** The mode of keys and client secrets the caller issues by default (a Hub user's: live). */
  mode: KeyMode
  actor: Actor
  /** The client address (TRUST_PROXY honoured); null for an operator. */
  ip: string | null
}

export const OPERATOR_ACTOR: Actor = { type: 'operator', id: null, label: 'operator' }

/** An operator command acting as if it were a key of `organisationId` (CLI reports). */
export const operatorPrincipal = (organisationId: string): Principal => ({
  organisationId,
  mode: 'live',
  actor: OPERATOR_ACTOR,
  ip: null,
})

export const apiKeyPrincipal = (key: Pick<AuthenticatedKey, 'id' | 'organisationId' | 'mode' | 'prefix'>, ip: string): Principal => ({
  organisationId: key.organisationId,
  mode: key.mode,
  actor: { type: 'apiKey', id: key.id, label: key.prefix },
  ip,
})

/** A key used from an address its organisation's IP allowlist refuses. */
export const ipNotAllowed = (): AppError =>
  new AppError('IP_NOT_ALLOWED', "this address may not use the organisation's api keys (ip allowlist)")

/** Whether the caller's key or role allows a permission (operators may do anything). */
export function principalMay(principal: Principal, permission: Permission): boolean {
  const { actor } = principal
  if (actor.type === 'operator') return true
  return isPermitted(actor.type === 'user' ? { kind: 'user', role: actor.role } : { kind: 'apiKey' }, permission)
}

/** A resolved key and when it stops working (ms since the epoch; undefined = until revoked). */
interface KeyEntry {
  key: AuthenticatedKey
  expiresAt: number | undefined
}

/** A key's last use is written at most this often per key and process. */
export const KEY_USE_RESOLUTION_MS = 60_000

export class AccessResolver {
  // A key that is unknown or revoked is cached too (as false), so a flood of bad keys costs one lookup each per TTL.
  private readonly keys: LoadingCache<KeyEntry | false>
  private readonly subtrees: LoadingCache<ReadonlySet<string>>
  private readonly ipAllowlists: LoadingCache<{ allows: (address: string) => boolean }>
  // An organisation's parent never changes, so neither does the top of its tree, nor its chain up to it.
  private readonly roots = createCache<string>({ max: 10_000 })
  private readonly chains = createCache<readonly ChainLink[]>({ max: 10_000 })
  private readonly lastUseWritten = new Map<string, number>()
  private readonly pendingWrites = new Set<Promise<void>>()

  constructor(
    private readonly db: Kysely<Database>,
    ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
  ) {
    this.keys = createLoadingCache({ max: 10_000, ttlMs, now })
    this.subtrees = createLoadingCache({ max: 10_000, ttlMs, now })
    this.ipAllowlists = createLoadingCache({ max: 10_000, ttlMs, now })
  }

  /** The key of a key hash (SHA-256 of the full key, as hex), or undefined when unknown, revoked or expired. */
  async authenticate(keyHash: string): Promise<AuthenticatedKey | undefined> {
    return this.keyOf(await this.keys.get(keyHash, this.loadKey(keyHash)))
  }

  /**
   * authenticate's answer when the cache holds it, without a promise: the key, null when unknown, revoked or expired,
   * or undefined when it takes a read (then call authenticate).
   */
  cachedAuthentication(keyHash: string): AuthenticatedKey | null | undefined {
    const entry = this.keys.getLoaded(keyHash, this.loadKey(keyHash))
    return entry === undefined ? undefined : (this.keyOf(entry) ?? null)
  }

  private loadKey(keyHash: string): () => Promise<KeyEntry | false> {
    return async () => {
      const key = await findKeyForAuthentication(this.db, Buffer.from(keyHash, 'hex'))
      return key ? { key, expiresAt: key.expiresAt?.getTime() } : false
    }
  }

  private keyOf(entry: KeyEntry | false): AuthenticatedKey | undefined {
    if (!entry || (entry.expiresAt !== undefined && entry.expiresAt <= this.now())) return undefined
    this.noteUse(entry.key.id)
    return entry.key
  }

  /**
   * Records a key's use, at most once a minute per key and process, off the request's path: a missed write only
   * makes "last used" older, never a request slower or failed.
   */
  private noteUse(keyId: string): void {
    const now = this.now()
    const last = this.lastUseWritten.get(keyId)
    if (last !== undefined && now - last < KEY_USE_RESOLUTION_MS) return
    if (this.lastUseWritten.size >= 10_000) this.lastUseWritten.clear()
    this.lastUseWritten.set(keyId, now)
    const write = touchKeyLastUsed(this.db, keyId, new Date(now), KEY_USE_RESOLUTION_MS)
      .catch(this.onBackgroundError)
      .finally(() => this.pendingWrites.delete(write))
    this.pendingWrites.add(write)
  }

  /** Waits for the last-use writes in flight (before the database closes). */
  async drain(): Promise<void> {
    await Promise.all([...this.pendingWrites])
  }

  /** Drops a key from this process's cache (after it was rotated or revoked here). Other processes follow within the TTL. */
  forgetKey(keyHash: Uint8Array): void {
    this.keys.delete(Buffer.from(keyHash).toString('hex'))
  }

  /** Drops every cached key (after an organisation was deactivated here: its keys stop at once in this process). */
  forgetKeys(): void {
    this.keys.clear()
  }

  /** Whether the IP allowlist in force for an organisation lets `address` use its API keys. */
  async ipAllowed(organisationId: string, address: string): Promise<boolean> {
    return (await this.ipAllowlists.get(organisationId, this.loadIpAllowlist(organisationId))).allows(address)
  }

  /** ipAllowed's answer when the organisation's allowlist is cached; undefined when it takes a read. */
  cachedIpAllowed(organisationId: string, address: string): boolean | undefined {
    return this.ipAllowlists.getLoaded(organisationId, this.loadIpAllowlist(organisationId))?.allows(address)
  }

  private loadIpAllowlist(organisationId: string): () => Promise<{ allows: (address: string) => boolean }> {
    return async () => ({ allows: compileIpAllowlist(await findEffectiveIpAllowlist(this.db, organisationId)) })
  }

  /** For an API key: its organisation's IP allowlist refuses other addresses (one answer whatever the key). */
  async assertIpAllowed(principal: Principal): Promise<void> {
    if (principal.actor.type !== 'apiKey') return
    if (!(await this.ipAllowed(principal.organisationId, principal.ip ?? ''))) {
      throw ipNotAllowed()
    }
  }

  forgetIpAllowlists(): void {
    this.ipAllowlists.clear()
  }

  /**
   * True when canSee is known to be true without a read: `organisationId` is the caller's own, or in its cached tree.
   * False means only "not known at once": ask canSee (or assertCanActOn).
   */
  seesAtOnce(principal: Principal, organisationId: string): boolean {
    if (organisationId === principal.organisationId) return true
    const id = principal.organisationId
    return this.subtrees.getLoaded(id, this.loadSubtree(id))?.has(organisationId) === true
  }

  /** True when `organisationId` is the caller's organisation or one of its active descendants. */
  async canSee(principal: Principal, organisationId: string): Promise<boolean> {
    if (organisationId === principal.organisationId) return true
    // A cached tree answers (and is refreshed as it ages); without one, the read below fills it.
    const id = principal.organisationId
    if (this.subtrees.peek(id) !== undefined && (await this.subtreeOf(id)).has(organisationId)) return true
    // A miss may be a child created moments ago by another instance: read the tree again before refusing.
    const fresh = new Set(await findActiveSubtreeIds(this.db, id))
    this.subtrees.set(id, fresh)
    return fresh.has(organisationId)
  }

  /**
   * True when `organisationId` is a descendant of the caller's organisation, active or not (never the caller's own):
   * what deactivation and reactivation may touch. Read from the database every time: it is rare.
   */
  async canManage(principal: Principal, organisationId: string): Promise<boolean> {
    if (organisationId === principal.organisationId) return false
    const tree = await findSubtreeOrganisations(this.db, principal.organisationId)
    return tree.some((organisation) => organisation.id === organisationId)
  }

  /** For an organisationId named in a request body: outside the caller's tree → 403. */
  async assertCanActOn(principal: Principal, organisationId: string, path = '/organisationId'): Promise<void> {
    if (!(await this.canSee(principal, organisationId))) {
      throw new AppError('FORBIDDEN', 'api key may not act on this organisation', [
        { path, message: "is outside the api key's organisation tree" },
      ])
    }
  }

  /** An organisation with its active descendants, cached for the TTL. */
  private subtreeOf(organisationId: string): Promise<ReadonlySet<string>> {
    return this.subtrees.get(organisationId, this.loadSubtree(organisationId))
  }

  private loadSubtree(organisationId: string): () => Promise<ReadonlySet<string>> {
    return async () => new Set(await findActiveSubtreeIds(this.db, organisationId))
  }

  /**
   * What a key may read, for lists across its tree: the top of the tree it sits in, and its organisation with its
   * active descendants (cached like canSee's; a child created moments ago shows up within the TTL).
   */
  async treeOf(principal: Principal): Promise<{ rootId: string; organisationIds: ReadonlySet<string> }> {
    const organisationIds = await this.subtreeOf(principal.organisationId)
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
