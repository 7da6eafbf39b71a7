// The real API for the client's tests: the app of this repository on a fresh test database (embedded PGlite, or
// Postgres when DATABASE_URL is set), listening on a free loopback port, with an organisation and its API key.
import type { AddressInfo } from 'node:net'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { buildApp } from '../../../../src/app.js'
import { loadConfig } from '../../../../src/config.js'
import type { DatabaseHandle } from '../../../../src/db/connect.js'
import { createTestDatabase } from '../../../../test/helpers/db.js'
import { createOrg, importDemoCatalogue, type OrgFixture } from '../../../../test/helpers/factories.js'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../../../../src/db/database.js'

/**
 * Makes the next `count` database statements fail as a lost connection does (ECONNREFUSED), so that the API answers
 * them with its real 503 SERVICE_UNAVAILABLE and Retry-After.
 */
export class DatabaseOutage implements KyselyPlugin {
  #remaining = 0
  failed = 0
  failNext(count: number): void {
    this.#remaining = count
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.#failIfDown()
    return args.node
  }
  #failIfDown(): void {
    if (this.#remaining > 0) {
      this.#remaining--
      this.failed++
      throw Object.assign(new Error('connect ECONNREFUSED (test outage)'), { code: 'ECONNREFUSED' })
    }
  }
  /**
   * `db` whose executeQuery of an already compiled statement (CompiledQuery.raw: the quote batch insert, prepared
   * statements) fails in the outage too; no plugin sees those, as they are compiled already.
   */
  guard(db: Kysely<Database>): Kysely<Database> {
    return new Proxy(db, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        if (prop !== 'executeQuery') return value.bind(target)
        return (query: { compile?: unknown }, ...rest: unknown[]) => {
          if (typeof query.compile !== 'function') this.#failIfDown()
          return value.call(target, query, ...rest)
        }
      },
    })
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result
  }
}

export interface TestApi {
  app: FastifyInstance
  db: Kysely<Database>
  baseUrl: string
  org: OrgFixture
  outage: DatabaseOutage
  close(): Promise<void>
}

export async function startApi(env: Record<string, string> = {}): Promise<TestApi> {
  const database = await createTestDatabase()
  const handle = await database.open()
  const outage = new DatabaseOutage()
  const db = outage.guard(handle.db.withPlugin(outage))
  const faulty: DatabaseHandle = { db, reads: db, backend: handle.backend, close: () => handle.close() }
  const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent', ...env }), database: faulty })
  await app.listen({ port: 0, host: '127.0.0.1' })
  await importDemoCatalogue(handle.db)
  const org = await createOrg(handle.db)
  return {
    app,
    db: handle.db,
    baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    org,
    outage,
    async close() {
      await app.close()
      await database.drop()
    },
  }
}

/** The florist request of the API's documentation (GBP 47.97, MCC 5992, London), with the amount as a string. */
export const floristQuote = (organisationId: string) => ({
  organisationId,
  locale: 'en-GB',
  consumer: { reference: 'consumer_123', countryCode: 'GBR' },
  merchant: {
    name: 'Blossom & Bloom',
    mcc: '5992',
    address: { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
  },
  transaction: { amount: '47.97', currencyCode: 'GBP' },
})
