import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openPglite, type DatabaseHandle } from '../../src/db/connect.js'
import { client } from '../helpers/app.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { runCli } from '../helpers/process.js'

// The CLI runs against DATABASE_URL on the Postgres run, and against an embedded data directory otherwise.
let env: Record<string, string>
let dataDir: string
let database: TestDatabase | undefined

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'canopy-cli-'))
  if (onPostgres()) {
    database = await createTestDatabase()
    env = { DATABASE_URL: database.url ?? '' }
  } else {
    env = { DATA_DIR: dataDir }
  }
})
afterAll(async () => {
  await database?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

async function openSameDatabase(): Promise<DatabaseHandle> {
  return database ? database.open(2) : openPglite({ dataDir: join(dataDir, 'pglite') })
}

describe('operator CLI', () => {
  it('creates organisations and keys, lists and revokes keys; the keys work over HTTP', async () => {
    const created = await runCli(['org', 'create', '--name', 'Acme Bank', '--country', 'GBR', '--currency', 'GBP', '--service-fee', '0.25', '--tax-liability', 'organisation'], env)
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    const org = created.json()
    expect(org).toMatchObject({
      organisationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      apiKey: expect.stringMatching(/^ck_live_[0-9A-Za-z]{40}$/),
      organisation: { tradingName: 'Acme Bank', mcc: null, serviceFeeRate: '0.25', taxLiability: 'organisation' },
    })

    const child = await runCli(['org', 'create', '--name', 'Corner Florist', '--country', 'GBR', '--currency', 'GBP', '--mcc', '5992', '--parent', org.organisationId], env)
    expect(child.code).toBe(0)
    expect(child.json().organisation.parentOrganisationId).toBe(org.organisationId)

    const testKey = await runCli(['key', 'create', '--org', org.organisationId, '--mode', 'test'], env)
    expect(testKey.code).toBe(0)
    expect(testKey.json().apiKey).toMatch(/^ck_test_/)

    const listed = await runCli(['key', 'list', '--org', org.organisationId], env)
    expect(listed.code).toBe(0)
    expect(listed.json().keys).toHaveLength(2)
    expect(listed.stdout).not.toContain(org.apiKey)
    expect(listed.stdout).not.toContain(testKey.json().apiKey)

    const revoked = await runCli(['key', 'revoke', '--key-prefix', testKey.json().prefix], env)
    expect(revoked.code).toBe(0)
    expect(revoked.json().revokedAt).toEqual(expect.any(String))
    const again = await runCli(['key', 'revoke', '--key-prefix', testKey.json().prefix], env)
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/already revoked/)

    const handle = await openSameDatabase()
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), database: handle })
    try {
      expect((await client(app, org.apiKey).get(`/v3/organisations/${child.json().organisationId}`)).statusCode).toBe(200)
      expect((await client(app, testKey.json().apiKey).get(`/v3/organisations/${org.organisationId}`)).statusCode).toBe(401)
    } finally {
      await app.close()
    }
  })

  it.each([
    ['a missing required option', ['org', 'create', '--name', 'X', '--currency', 'GBP'], 2, /--country is required/],
    ['a two-letter country', ['org', 'create', '--name', 'X', '--country', 'GB', '--currency', 'GBP'], 2, /alpha-3/],
    ['a bad MCC', ['org', 'create', '--name', 'X', '--country', 'GBR', '--currency', 'GBP', '--mcc', '12'], 2, /--mcc/],
    ['an unknown option', ['key', 'list', '--org', '6f1c2b8e-0000-4000-8000-000000000000', '--colour', 'red'], 2, /colour/],
    ['an unknown command', ['org', 'delete'], 2, /unknown command/],
    ['a non-uuid organisation', ['key', 'create', '--org', 'acme'], 2, /uuid/],
    ['an unknown country', ['org', 'create', '--name', 'X', '--country', 'XXX', '--currency', 'GBP'], 1, /country/],
    ['an unknown organisation', ['key', 'list', '--org', '6f1c2b8e-0000-4000-8000-000000000000'], 1, /organisation not found/],
  ])('exits non-zero with a message for %s', async (_label, args, code, message) => {
    const result = await runCli(args, env)
    expect(result.code).toBe(code)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(message)
  })

  it('prints usage with --help', async () => {
    const result = await runCli(['--help'], env)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/org create --name/)
  })
})
