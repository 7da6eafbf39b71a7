// Sessions (docs/api-contract.md, "Sessions"): a quote and its session stored together; the client secret is
// shown once, kept only as SHA-256, and opens exactly one session until it expires.
import { timingSafeEqual } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database, QuoteRequestRecord } from '../db/database.js'
import type { Quote } from '../db/repositories/quotes.js'
import { findSessionWithQuote, type SdkVariant, type Session, type SessionKind } from '../db/repositories/sessions.js'
import type { ImpactType } from '../domain/types.js'
import { AppError, notFound } from '../errors.js'
import type { Principal } from './access.js'
import { randomBase62, sha256, type KeyMode } from './api-keys.js'
import { priceNewQuote, type QuoteDeps } from './quotes.js'
import { newId } from '../ids.js'

export type { SdkVariant, Session, SessionKind }

export interface SessionDeps extends QuoteDeps {
  readonly db: Kysely<Database>
  readonly sessionTtlSeconds: number
}

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
  session: Session
  /** Returned here and never again. */
  clientSecret: string
}

/** A session with the quote it renders. */
export interface SessionWithQuote {
  session: Session
  quote: Quote
}

/** Prices the session's quote and stores quote and session in one statement. */
export async function createSession(deps: SessionDeps, principal: Principal, input: NewSession): Promise<CreatedSession> {
  const quote = await priceNewQuote(deps, principal, input.request, input.impactType)
  const clientSecret = generateClientSecret(principal.mode)
  const session: Session = {
    id: newId(),
    organisationId: quote.organisationId,
    quoteId: quote.id,
    kind: input.kind,
    sdkVariant: input.sdkVariant,
    impactType: input.impactType,
    clientSecretHash: sha256(clientSecret),
    expiresAt: new Date(quote.createdAt.getTime() + deps.sessionTtlSeconds * 1000),
    createdAt: quote.createdAt,
  }
  await deps.quotes.saveWithSession(quote, session)
  deps.metrics.quoteCreated(input.impactType, input.request.origin)
  deps.metrics.sessionCreated(input.kind)
  return { session, clientSecret }
}

/** Who reads a session: the frontend SDK with the session's client secret, or a merchant API key. */
export type SessionCredential = { kind: 'client-secret'; secret: string } | { kind: 'api-key'; principal: Principal }

const NO_HASH = Buffer.alloc(32)

const secretMatches = (session: Session | undefined, secret: string): boolean => {
  const presented = sha256(secret)
  // Compared even when the session is unknown, so both failures take the same time.
  const stored = session ? session.clientSecretHash : NO_HASH
  const equal = stored.length === presented.length && timingSafeEqual(stored, presented)
  return equal && session !== undefined
}

/**
 * A session of `kind` for the SDK. Order matters: authenticate first (401, one body for every reason),
 * then hide other organisations' and other kinds' sessions (404), then refuse expired ones (410), so
 * that a caller without the secret learns nothing about the session.
 */
export async function readSession(
  deps: Pick<SessionDeps, 'db' | 'access' | 'clock'>,
  credential: SessionCredential,
  id: string,
  kind: SessionKind,
): Promise<SessionWithQuote> {
  const found = await findSessionWithQuote(deps.db, id)
  if (credential.kind === 'client-secret') {
    if (!secretMatches(found?.session, credential.secret)) throw sessionUnauthorized()
  } else if (!found || !(await deps.access.canSee(credential.principal, found.session.organisationId))) {
    throw notFound('session')
  }
  if (!found || found.session.kind !== kind) throw notFound('session')
  if (deps.clock().getTime() >= found.session.expiresAt.getTime()) {
    throw new AppError('SESSION_EXPIRED', 'session has expired; a new session must be created')
  }
  return found
}
