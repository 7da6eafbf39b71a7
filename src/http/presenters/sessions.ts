// Sessions → wire (docs/api-contract.md, "Sessions"): the creation answer (with the client secret, once) and
// what the frontend SDK renders.
import type { CreatedSession, SessionWithQuote } from '../../services/sessions.js'
import type { CreatedSessionBody, SdkDisclosure, SdkSessionBody } from '../schemas/sessions.js'
import { presentSdkQuote } from './quotes.js'

export const presentCreatedSession = ({ session, clientSecret }: CreatedSession): CreatedSessionBody => ({
  sessionId: session.id,
  clientSecret,
  quoteId: session.quoteId,
  expiresAt: session.expiresAt.toISOString(),
})

/** The US disclosure's facts from the configuration: OPERATOR_LEGAL_NAME and DISCLOSURE_PAYOUT_DAYS ("30-60" or "45"). */
export function sdkDisclosure(operatorLegalName: string | undefined, payoutDays: string): SdkDisclosure {
  const [min = 0, max = min] = payoutDays.split('-').map(Number)
  return { collectingParty: operatorLegalName ?? null, payoutDays: { min: Math.min(min, max), max: Math.max(min, max) } }
}

export const presentSdkSession = (
  { session, quote }: SessionWithQuote,
  locale: string | undefined,
  disclosure: SdkDisclosure,
): SdkSessionBody => {
  const { currencyCode, locale: resolved, ...rest } = presentSdkQuote(quote, locale)
  return {
    sessionId: session.id,
    kind: session.kind,
    sdkVariant: session.sdkVariant,
    impactType: session.impactType,
    expiresAt: session.expiresAt.toISOString(),
    quoteId: quote.id,
    currencyCode,
    locale: resolved,
    disclosure: { collectingParty: disclosure.collectingParty, payoutDays: { ...disclosure.payoutDays } },
    ...rest,
  }
}
