// Sessions (DESIGN.md §7): a quote and its session stored together; the client secret is shown once,
// kept only as SHA-256, and opens exactly one session until it expires.
import { randomUUID, timingSafeEqual } from 'node:crypto'
import type { AppContext } from '../context.js'
import type { QuoteRequestRecord } from '../db/database.js'
import { findSessionWithQuote, insertQuoteWithSession, type SessionRow } from '../db/repositories/sessions.js'
import type { ImpactType } from '../domain/types.js'
import { AppError, notFound } from '../errors.js'
import type { Principal } from './access.js'
import { randomBase62, sha256, type KeyMode } from './api-keys.js'
import { prepareQuote, toStoredQuote, type StoredQuote } from './quotes.js'

export type SessionKind = 'post-purchase' | 'checkout'
export type SdkVariant = 'embedded' | 'takeover'

/** 24 base62 characters on each side: 2 × 142.9 bits. */
const SECRET_PART_LENGTH = 24
export const CLIENT_SECRET_PATTERN = /^cs_(live|test)_[0-9A-Za-z]{24,64}_secret_[0-9A-Za-z]{24,64}$/

export function generateClientSecret(mode: KeyMode): string {
  return `cs_${mode}_${randomBase62(SECRET_PART_LENGTH)}_secret_${randomBase62(SECRET_PART_LENGTH)}`
}

/** The one answer for every failed session authentication, whatever the reason. */
export const sessionUnauthorized = (): AppError => new AppError('UNAUTHORIZED', 'invalid or missing client secret or api key')

export interface NewSession {
  kind: SessionKind
  /** Post-purchase sessions only. */
  sdkVariant: SdkVariant | null
  impactType: ImpactType
  request: QuoteRequestRecord
}

export interface CreatedSession {
  sessionId: string
  /** Returned here and never again. */
  clientSecret: string
  quoteId: string
  expiresAt: Date
}

export interface Session {
  id: string
  kind: SessionKind
  sdkVariant: SdkVariant | null
  impactType: ImpactType
  expiresAt: Date
  quote: StoredQuote
}

/** Prices the session's quote and stores quote and session in one statement. */
export async function createSession(ctx: AppContext, principal: Principal, input: NewSession): Promise<CreatedSession> {
  const { quote, row, snapshot } = await prepareQuote(ctx, principal, input.request, input.impactType)
  const clientSecret = generateClientSecret(principal.mode)
  const expiresAt = new Date(quote.createdAt.getTime() + ctx.config.SESSION_TTL_SECONDS * 1000)
  const sessionId = randomUUID()
  await insertQuoteWithSession(
    ctx.database.db,
    row,
    {
      id: sessionId,
      organisation_id: quote.organisationId,
      quote_id: quote.id,
      kind: input.kind,
      sdk_variant: input.sdkVariant,
      impact_type: input.impactType,
      client_secret_hash: sha256(clientSecret),
      expires_at: expiresAt,
      created_at: quote.createdAt,
    },
    ctx.snapshots.has(snapshot.id) ? null : snapshot,
  )
  ctx.snapshots.add(snapshot.id)
  ctx.quotes.set(quote)
  return { sessionId, clientSecret, quoteId: quote.id, expiresAt }
}

/** Who reads a session: the frontend SDK with the session's client secret, or a merchant API key. */
export type SessionCredential = { kind: 'client-secret'; secret: string } | { kind: 'api-key'; principal: Principal }

const NO_HASH = Buffer.alloc(32)

const secretMatches = (session: SessionRow | undefined, secret: string): boolean => {
  const presented = sha256(secret)
  const stored = session ? Buffer.from(session.client_secret_hash) : NO_HASH
  // Compared even when the session is unknown, so both failures take the same time.
  const equal = stored.length === presented.length && timingSafeEqual(stored, presented)
  return equal && session !== undefined
}

/**
 * A session of `kind` for the SDK. Order matters: authenticate first (401, one body for every reason),
 * then hide other organisations' and other kinds' sessions (404), then refuse expired ones (410), so
 * that a caller without the secret learns nothing about the session.
 */
export async function readSession(ctx: AppContext, id: string, kind: SessionKind, credential: SessionCredential): Promise<Session> {
  const found = await findSessionWithQuote(ctx.database.db, id)
  if (credential.kind === 'client-secret') {
    if (!secretMatches(found?.session, credential.secret)) throw sessionUnauthorized()
  } else if (!found || !(await ctx.access.canSee(credential.principal, found.session.organisation_id))) {
    throw notFound('session')
  }
  if (!found || found.session.kind !== kind) throw notFound('session')
  const { session } = found
  if (ctx.clock().getTime() >= session.expires_at.getTime()) {
    throw new AppError('SESSION_EXPIRED', 'session has expired; a new session must be created')
  }
  return {
    id: session.id,
    kind: session.kind,
    sdkVariant: session.sdk_variant,
    impactType: session.impact_type,
    expiresAt: session.expires_at,
    quote: ctx.quotes.get(session.quote_id) ?? toStoredQuote(found.quote, found.snapshot),
  }
}
