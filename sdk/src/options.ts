// Element options (create / update), validated synchronously, and the contribution choices they make
// once the session's currency is known.
import { isDecimalString, minorUnitsOf, roundUpMinor, toMinor } from './money.js'

export interface RoundUpOptions {
  /** The order total before any contribution, as a decimal string: "47.97". */
  orderTotal: string
  /** Round up to the next multiple of this (decimal string). Default: 1 unit of the currency (100 for 0-decimal currencies). */
  increment?: string
}

export interface ElementOptions {
  /** Fixed contribution amounts offered, as decimal strings in the session's currency: ['1.00', '2.00']. At most 6. */
  contributionAmounts?: readonly string[]
  /** Offer to round the order total up; the difference is the contribution. null removes it (update). */
  roundUp?: RoundUpOptions | null
  /** Offer to offset the footprint for `credits.amounts.total` (carbon sessions). Default true. */
  credits?: boolean
  /** ekko's form: a container to mount into at once (selector or element). create() only. */
  container?: string | Element
}

export interface ContributionChoice {
  kind: 'fixed' | 'roundUp'
  /** The contribution, in minor units. */
  minor: number
  /** Round-up only: the order total it rounds up to, in minor units. */
  totalMinor?: number
}

const KEYS = ['contributionAmounts', 'roundUp', 'credits', 'container']
const MAX_AMOUNTS = 6
// At most 12 integer digits and 4 decimals: beyond any amount the API accepts.
const AMOUNT = /^\d{1,12}(?:\.\d{1,4})?$/

function invalid(message: string): never {
  throw new Error(`Canopy: ${message}`)
}

const amount = (value: unknown, where: string, positive: boolean): string => {
  if (!isDecimalString(value) || !AMOUNT.test(value)) {
    invalid(`${where} must be a decimal string such as "2.00" (got ${JSON.stringify(value) ?? String(value)})`)
  }
  if (positive && !/[1-9]/.test(value)) invalid(`${where} must be greater than 0`)
  return value
}

/** Checks what can be checked without the session's currency; returns a copy without `container`. */
export function validateOptions(input: unknown, method: 'create' | 'update'): ElementOptions {
  if (input === undefined) return {}
  if (typeof input !== 'object' || input === null || Array.isArray(input)) invalid(`${method}() options must be an object`)
  const options = input as Record<string, unknown>
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) invalid(`${key} is not an element option (${KEYS.join(', ')})`)
  }
  if (method === 'update' && options.container !== undefined) invalid('update() cannot change the container: unmount() and mount() instead')
  const out: ElementOptions = {}
  if (options.credits !== undefined) {
    if (typeof options.credits !== 'boolean') invalid('credits must be true or false')
    out.credits = options.credits
  }
  if (options.contributionAmounts !== undefined) {
    const list = options.contributionAmounts
    if (!Array.isArray(list)) invalid('contributionAmounts must be an array of decimal strings such as ["1.00", "2.00"]')
    if (list.length > MAX_AMOUNTS) invalid(`contributionAmounts may offer at most ${MAX_AMOUNTS} amounts`)
    const seen = new Set<string>()
    out.contributionAmounts = list.map((value: unknown, i: number) => {
      const text = amount(value, `contributionAmounts[${i}]`, true)
      const key = String(toMinor(text, 4))
      if (seen.has(key)) invalid(`contributionAmounts[${i}] (${text}) is offered twice`)
      seen.add(key)
      return text
    })
  }
  if (options.roundUp !== undefined && options.roundUp !== null) {
    const roundUp = options.roundUp as Record<string, unknown>
    if (typeof roundUp !== 'object' || Array.isArray(roundUp))
      invalid('roundUp must be an object: { orderTotal: "47.97", increment?: "1.00" }')
    for (const key of Object.keys(roundUp)) {
      if (key !== 'orderTotal' && key !== 'increment') invalid(`roundUp.${key} is not a round-up option (orderTotal, increment)`)
    }
    out.roundUp = {
      orderTotal: amount(roundUp.orderTotal, 'roundUp.orderTotal', true),
      ...(roundUp.increment === undefined ? {} : { increment: amount(roundUp.increment, 'roundUp.increment', true) }),
    }
  } else if (options.roundUp === null) {
    out.roundUp = null
  }
  if (options.container !== undefined) out.container = options.container as string | Element
  return out
}

/** The contribution choices in the session's currency; throws an Error naming the option that does not fit it. */
export function contributionChoices(options: ElementOptions, currencyCode: string): ContributionChoice[] {
  const digits = minorUnitsOf(currencyCode)
  const inCurrency = (value: string, where: string): number => {
    try {
      return toMinor(value, digits)
    } catch {
      return invalid(`${where} ("${value}") has more decimal places than ${currencyCode} allows (${digits})`)
    }
  }
  const choices: ContributionChoice[] = (options.contributionAmounts ?? []).map((value, i) => ({
    kind: 'fixed',
    minor: inCurrency(value, `contributionAmounts[${i}]`),
  }))
  if (options.roundUp) {
    const total = inCurrency(options.roundUp.orderTotal, 'roundUp.orderTotal')
    const increment = options.roundUp.increment ? inCurrency(options.roundUp.increment, 'roundUp.increment') : digits ? 10 ** digits : 100
    const minor = roundUpMinor(total, increment)
    // A total already at a multiple has nothing to round up: the choice is not offered.
    if (minor > 0) choices.push({ kind: 'roundUp', minor, totalMinor: total + minor })
  }
  return choices
}
