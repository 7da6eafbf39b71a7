// Statements (docs/reconciliation.md, "Statements"): one organisation's month, per currency, from the sums of its
// impact and profit-share records (src/db/repositories/statements.ts), assembled by the pure domain.
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Database } from '../db/database.js'
import { findOrganisationChain, findSubtreeIds } from '../db/repositories/organisations.js'
import { findStatementSums } from '../db/repositories/statements.js'
import { DEFAULT_SETTLEMENT_MODEL } from '../domain/profit-share.js'
import { buildStatement, statementPeriod, type Statement } from '../domain/statement.js'
import type { AccessResolver, Principal } from './access.js'

export interface StatementDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
  readonly clock: Clock
}

/**
 * The statement of `organisationId` (the key's own or a descendant; another is FORBIDDEN, as the reconciliation
 * list's fundsOrganisationId) for the month `period` ("YYYY-MM", UTC): the current month so far, a month that has
 * not begun PERIOD_IN_FUTURE.
 */
export async function getStatement(
  deps: StatementDeps,
  principal: Principal,
  query: { organisationId: string; period: string },
): Promise<Statement> {
  await deps.access.assertCanActOn(principal, query.organisationId, '/organisationId')
  const now = deps.clock()
  const { from, to } = statementPeriod(query.period, now)
  const chain = await findOrganisationChain(deps.db, query.organisationId)
  const root = chain[0]
  if (root === undefined) throw new Error(`organisation ${query.organisationId} has no chain`)
  const sums = await findStatementSums(deps.db, {
    rootOrganisationId: root.id,
    organisationId: query.organisationId,
    subtreeIds: await findSubtreeIds(deps.db, query.organisationId),
    level: chain.length - 1,
    from,
    to,
  })
  return buildStatement({
    organisationId: query.organisationId,
    period: query.period,
    settlementModel: root.settlementModel ?? DEFAULT_SETTLEMENT_MODEL,
    now,
    ...sums,
  })
}
