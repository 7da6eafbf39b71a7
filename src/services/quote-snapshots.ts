// The catalogue part of a locked quote (partner details, priced projects) is stored once per distinct
// content, keyed by the SHA-256 of its JSON; a quote row holds the rest and the snapshot's id.
import { createHash } from 'node:crypto'
import type { QuoteSnapshotBody, StoredLockedQuote } from '../db/database.js'
import type { LockedQuote } from '../domain/types.js'

export interface QuoteSnapshot {
  id: string
  /** JSON of QuoteSnapshotBody. */
  body: string
}

// Partner snapshots and priced portfolios are frozen objects shared across quotes (the domain
// memoises them), so their snapshot can be memoised by object identity.
const objectIds = new WeakMap<object, number>()
let nextObjectId = 1
const idOf = (value: object): number => {
  let id = objectIds.get(value)
  if (id === undefined) {
    id = nextObjectId++
    objectIds.set(value, id)
  }
  return id
}
const snapshots = new Map<string, QuoteSnapshot>()

export function snapshotOf(locked: LockedQuote): QuoteSnapshot {
  const projects = locked.credits?.projects ?? []
  const key = `${idOf(projects)}|${locked.partners.map(idOf).join(',')}`
  let snapshot = snapshots.get(key)
  if (snapshot === undefined) {
    const body = JSON.stringify({ partners: locked.partners, projects } satisfies QuoteSnapshotBody)
    snapshot = { id: createHash('sha256').update(body).digest('hex'), body }
    if (snapshots.size >= 10_000) snapshots.clear()
    snapshots.set(key, snapshot)
  }
  return snapshot
}

/** quotes.locked: the locked quote without what its snapshot holds. */
export function storedLockedJson(locked: LockedQuote): string {
  return JSON.stringify({
    ...locked,
    partners: undefined,
    credits: locked.credits ? { ...locked.credits, projects: undefined } : undefined,
  })
}

/** The whole locked quote again, from its row and its snapshot (older rows carry everything inline). */
export function joinSnapshot(stored: StoredLockedQuote, snapshot: QuoteSnapshotBody | null): LockedQuote {
  const partners = snapshot?.partners ?? stored.partners ?? []
  const { credits, ...rest } = stored
  return {
    ...rest,
    partners,
    ...(credits ? { credits: { ...credits, projects: snapshot?.projects ?? credits.projects ?? [] } } : {}),
  }
}

/** The snapshot ids this process has seen committed, so each is written once (bounded). */
export class KnownSnapshots {
  private readonly ids = new Set<string>()
  has(id: string): boolean {
    return this.ids.has(id)
  }
  add(id: string): void {
    if (this.ids.size >= 10_000) this.ids.clear()
    this.ids.add(id)
  }
}
