// Which credit projects and contribution partners a quote prices (docs/pricing.md, "Projects and partners").
import type { ConsumerLocation, CreditProject, ImpactPartner, LocationMatchAccuracy } from './types.js'
import { Decimal } from './money.js'
import { normaliseSubdivision, toAlpha2 } from './countries.js'

/** At most this many projects, and this many contribution partners, per quote. */
export const MAX_PORTFOLIO_SIZE = 3

/** Priority descending, then id ascending (code-unit order, locale-independent). */
function byPriorityThenId<T extends { readonly priority: number; readonly id: string }>(a: T, b: T): number {
  if (a.priority !== b.priority) return b.priority - a.priority
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** A project's alpha-2 country; catalogues may hold alpha-3 (the API's form) or alpha-2. */
function projectCountry(project: CreditProject): string | undefined {
  const code = project.location.countryCode?.trim().toUpperCase()
  if (code === undefined || code === '') return undefined
  return code.length === 2 ? code : toAlpha2(code)
}

/** The locked weight of a project: its catalogue weight, or "1" (equal weights) when null. */
export function projectWeight(project: CreditProject): string {
  return project.weight ?? '1'
}

/** Active, with a positive (or default) weight: a zero-weight project could never receive funds. */
function isSelectable(project: CreditProject): boolean {
  if (!project.active) return false
  if (project.weight === null) return true
  const weight = new Decimal(project.weight)
  return weight.isFinite() && weight.greaterThan(0)
}

/**
 * Chooses the credit projects a quote prices. Candidates are active projects with a null or
 * positive weight. With `matchConsumerLocation`:
 * projects in the consumer's country and state (states compared after normaliseSubdivision) →
 * `state`; else projects in the consumer's country → `country`; else every candidate → `global`.
 * Without it (false or absent) every candidate is eligible and accuracy is `global`.
 * The eligible set is ordered by priority (desc) then id and cut to 3. Returns an empty list when
 * there are no candidates (the caller raises NO_CREDIT_PROJECTS).
 */
export function selectCreditProjects(
  projects: readonly CreditProject[],
  consumer: ConsumerLocation,
  matchConsumerLocation: boolean,
): { projects: CreditProject[]; accuracy: LocationMatchAccuracy } {
  const candidates = projects.filter(isSelectable)
  let eligible = candidates
  let accuracy: LocationMatchAccuracy = 'global'
  if (matchConsumerLocation) {
    const country = toAlpha2(consumer.countryCode)
    const state = normaliseSubdivision(consumer.countryCode, consumer.state)
    const inCountry = country === undefined ? [] : candidates.filter((project) => projectCountry(project) === country)
    const inState =
      state === null
        ? []
        : inCountry.filter((project) => normaliseSubdivision(consumer.countryCode, project.location.state ?? undefined) === state)
    if (inState.length > 0) {
      eligible = inState
      accuracy = 'state'
    } else if (inCountry.length > 0) {
      eligible = inCountry
      accuracy = 'country'
    }
  }
  return { projects: [...eligible].sort(byPriorityThenId).slice(0, MAX_PORTFOLIO_SIZE), accuracy }
}

/**
 * The contribution partners of a quote: active partners of kind `contribution`, by priority (desc)
 * then id, at most 3. `partners` is already limited to the organisation's allowed partners.
 */
export function selectContributionPartners(partners: readonly ImpactPartner[]): ImpactPartner[] {
  return partners
    .filter((partner) => partner.active && partner.kind === 'contribution')
    .sort(byPriorityThenId)
    .slice(0, MAX_PORTFOLIO_SIZE)
}
