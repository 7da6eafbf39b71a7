import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { runCli } from '../helpers/process.js'

// The CLI runs against DATABASE_URL on the Postgres run, and against an embedded data directory otherwise.
let env: Record<string, string>
let dataDir: string
let database: TestDatabase | undefined

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'canopy-webhooks-cli-'))
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

describe('webhooks CLI', { timeout: 120_000 }, () => {
  it('creates (secret shown once), lists and deletes endpoints; refuses bad input', async () => {
    const org = (await runCli(['org', 'create', '--name', 'Hook Shop', '--country', 'GBR', '--currency', 'GBP'], env)).json()
    const created = await runCli(
      [
        'webhooks',
        'create',
        '--organisation',
        org.organisationId,
        '--url',
        'https://93.184.215.14/hooks',
        '--events',
        'allocation.created',
        '--format',
        'ekko',
      ],
      env,
    )
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    const endpoint = created.json()
    expect(endpoint).toMatchObject({
      organisationId: org.organisationId,
      enabledEvents: ['allocation.created'],
      format: 'ekko',
      status: 'enabled',
    })
    expect(endpoint.secret).toMatch(/^whsec_/)

    const listed = await runCli(['webhooks', 'list', '--organisation', org.organisationId], env)
    expect(listed.json().data.map((e: { id: string }) => e.id)).toEqual([endpoint.id])
    expect(listed.stdout).not.toContain(endpoint.secret)

    const refused = await runCli(['webhooks', 'create', '--organisation', org.organisationId, '--url', 'https://10.0.0.1/hooks'], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('webhook url refused')
    const badFormat = await runCli(
      ['webhooks', 'create', '--organisation', org.organisationId, '--url', 'https://93.184.215.14/', '--format', 'xml'],
      env,
    )
    expect(badFormat.code).toBe(2)

    const deleted = await runCli(['webhooks', 'delete', endpoint.id], env)
    expect(deleted.code).toBe(0)
    expect((await runCli(['webhooks', 'list', '--organisation', org.organisationId], env)).json().data).toEqual([])
  })
})
