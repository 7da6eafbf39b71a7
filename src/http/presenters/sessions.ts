// Sessions → wire (docs/api-contract.md, "Sessions"): the creation answer (with the client secret, once) and
// what the frontend SDK renders.
import type { CreatedSession, SessionWithQuote } from '../../services/sessions.js'
import type { CreatedSessionBody, SdkSessionBody } from '../schemas/sessions.js'
import { presentSdkQuote } from './quotes.js'

export const presentCreatedSession = ({ session, clientSecret }: CreatedSession): CreatedSessionBody => ({
  sessionId: session.id,
  clientSecret,
  quoteId: session.quoteId,
  expiresAt: session.expiresAt.toISOString(),
})

export const presentSdkSession = ({ session, quote }: SessionWithQuote, locale: string | undefined): SdkSessionBody => ({
  sessionId: session.id,
  kind: session.kind,
  sdkVariant: session.sdkVariant,
  impactType: session.impactType,
  expiresAt: session.expiresAt.toISOString(),
  quoteId: quote.id,
  ...presentSdkQuote(quote, locale),
})
