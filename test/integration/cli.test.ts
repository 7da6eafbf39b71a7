import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openPglite, type DatabaseHandle } from '../../src/db/connect.js'
import { client } from '../helpers/app.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { DAILY } from '../helpers/fx-files.js'
import { runCli } from '../helpers/process.js'
import { floristQuote } from '../helpers/factories.js'
import { findQuoteById } from '../../src/db/repositories/quotes.js'

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

// Every command is a new process (tsx, and on the embedded run PGlite): a few seconds each on a busy 2-core machine.
describe('operator CLI', { timeout: 120_000 }, () => {
  it('creates organisations and keys, lists and revokes keys; the keys work over HTTP', async () => {
    const created = await runCli(
      [
        'org',
        'create',
        '--name',
        'Acme Bank',
        '--country',
        'GBR',
        '--currency',
        'GBP',
        '--service-fee',
        '0.25',
        '--tax-liability',
        'organisation',
      ],
      env,
    )
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    const org = created.json()
    expect(org).toMatchObject({
      organisationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      apiKey: expect.stringMatching(/^ck_live_[0-9A-Za-z]{40}$/),
      organisation: { tradingName: 'Acme Bank', mcc: null, serviceFeeRate: '0.25', taxLiability: 'organisation' },
    })

    const child = await runCli(
      [
        'org',
        'create',
        '--name',
        'Corner Florist',
        '--country',
        'GBR',
        '--currency',
        'GBP',
        '--mcc',
        '5992',
        '--parent',
        org.organisationId,
      ],
      env,
    )
    expect(child.code).toBe(0)
    expect(child.json().organisation.parentOrganisationId).toBe(org.organisationId)

    // The organisation's first Hub admin, with its one-time set-password link under PUBLIC_BASE_URL.
    const user = await runCli(['user', 'create', '--organisation', org.organisationId, '--email', 'Ada@Acme.example', '--role', 'admin'], {
      ...env,
      PUBLIC_BASE_URL: 'https://canopy.acme.example/',
    })
    expect(user.stderr).toBe('')
    expect(user.json()).toEqual({
      userId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organisationId: org.organisationId,
      email: 'ada@acme.example',
      role: 'admin',
      setPasswordUrl: expect.stringMatching(/^https:\/\/canopy\.acme\.example\/hub\/set-password#token=[\w-]{43}$/),
    })
    expect((await runCli(['user', 'create', '--organisation', org.organisationId, '--email', 'x@y.z', '--role', 'owner'], env)).code).toBe(
      2,
    )

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

  it("imports the demo catalogue idempotently and an operator's catalogue and factors; bad files change nothing", async () => {
    const demo = await runCli(['catalogue', 'import', '--demo'], env)
    expect(demo.code).toBe(0)
    expect(demo.json()).toEqual({ impactPartners: 5, projects: 10, organisationPartners: 0 })
    expect((await runCli(['catalogue', 'import', '--demo'], env)).json()).toEqual(demo.json())

    const org = (
      await runCli(['org', 'create', '--name', 'Importer', '--country', 'GBR', '--currency', 'GBP', '--mcc', '5992'], env)
    ).json()
    const partnerId = '11111111-2222-4333-8444-555555555555'
    const catalogueFile = join(dataDir, 'catalogue.json')
    writeFileSync(
      catalogueFile,
      JSON.stringify({
        impactPartners: [
          {
            id: partnerId,
            kind: 'credits',
            name: 'Own Partner',
            shortDescription: 'Ours',
            images: { logos: [] },
            priority: 100,
            active: true,
          },
        ],
        projects: [
          {
            id: '66666666-7777-4888-8999-000000000000',
            impactPartnerId: partnerId,
            name: 'Own Project',
            shortDescription: 'Ours',
            type: 'carbonCredits',
            location: { countryCode: 'GBR', state: null },
            price: '40.00',
            priceCurrency: 'GBP',
            priority: 100,
            weight: null,
            active: true,
          },
        ],
        organisationPartners: [{ organisationId: org.organisationId, impactPartnerIds: [partnerId] }],
      }),
    )
    const imported = await runCli(['catalogue', 'import', catalogueFile], env)
    expect(imported.code).toBe(0)
    expect(imported.json()).toEqual({ impactPartners: 1, projects: 1, organisationPartners: 1 })

    const badFile = join(dataDir, 'bad.json')
    writeFileSync(
      badFile,
      JSON.stringify({
        impactPartners: [],
        projects: [
          {
            id: '99999999-7777-4888-8999-000000000000',
            impactPartnerId: '00000000-0000-4000-8000-000000000000',
            name: 'X',
            shortDescription: '',
            type: 'carbonCredits',
            location: { countryCode: 'ZZZ', state: null },
            price: '1',
            priceCurrency: 'XXX',
            priority: 0,
            weight: null,
            active: true,
          },
        ],
      }),
    )
    const bad = await runCli(['catalogue', 'import', badFile], env)
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/unknown impact partner[\s\S]*unsupported currency XXX[\s\S]*unknown country ZZZ/)

    const factorsFile = join(dataDir, 'factors.csv')
    writeFileSync(
      factorsFile,
      'id,kind,mccFrom,mccTo,region,value,baseCurrency,priceYear,source,version,licence,note\n' +
        'own-5992-gbr,carbon,5992,5992,GBR,0.5,EUR,2024,Own survey,1,CC0,"florists, our own figure"\n',
    )
    const factors = await runCli(['factors', 'import', factorsFile], env)
    expect(factors.code).toBe(0)
    expect(factors.json()).toEqual({ factors: 1 })
    writeFileSync(join(dataDir, 'bad.csv'), 'id,kind\nx,carbon\n')
    const badFactors = await runCli(['factors', 'import', join(dataDir, 'bad.csv')], env)
    expect(badFactors.code).toBe(1)
    expect(badFactors.stderr).toMatch(/missing column mccFrom/)
    expect((await runCli(['catalogue', 'import'], env)).code).toBe(2)

    // The imported factor and catalogue price the next quote; nothing from the bad files was stored.
    const handle = await openSameDatabase()
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), database: handle })
    try {
      const quote = await client(app, org.apiKey).post('/quotes/carbon', {
        organisationId: org.organisationId,
        locale: 'en-GB',
        consumer: { reference: 'c', countryCode: 'GBR' },
        transaction: { amount: 100, currencyCode: 'EUR' },
      })
      expect(quote.statusCode).toBe(201)
      expect(quote.json().footprint.co2eGrams).toBe(50000) // €100 × 0.5 kg/€
      expect(quote.json().credits.unit.price).toBe(46.09) // £40 in EUR at 0.8679 £/€
      const projects = (await client(app, org.apiKey).get(`/quotes/${quote.json().quoteId}/projects`)).json()
      expect(projects.map((p: { name: string }) => p.name)).toEqual(['Own Project'])
      const rows = await handle.db.selectFrom('projects').select('id').where('id', '=', '99999999-7777-4888-8999-000000000000').execute()
      expect(rows).toEqual([])
    } finally {
      await app.close()
    }
  })

  it('rotates a key by prefix or id: a new key shown once, the old one expiring; bad arguments exit 2', async () => {
    const org = (await runCli(['org', 'create', '--name', 'Rotator', '--country', 'GBR', '--currency', 'GBP'], env)).json()
    const first = await runCli(['key', 'rotate', org.apiKeyPrefix, '--expire-old-in', '0'], env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const rotated = first.json()
    expect(rotated).toMatchObject({
      organisationId: org.organisationId,
      apiKey: expect.stringMatching(/^ck_live_[0-9A-Za-z]{40}$/),
      expiresAt: null,
      previousKey: { prefix: org.apiKeyPrefix, expiresAt: expect.any(String), replacedByKeyId: rotated.id },
    })
    expect(Date.parse(rotated.previousKey.expiresAt)).toBeLessThanOrEqual(Date.now())

    const second = await runCli(['key', 'rotate', rotated.id], env)
    expect(second.code).toBe(0)
    const expiry = Date.parse(second.json().previousKey.expiresAt) - Date.parse(second.json().createdAt)
    expect(expiry).toBe(86_400_000)
    const twice = await runCli(['key', 'rotate', rotated.id], env)
    expect(twice.code).toBe(1)
    expect(twice.stderr).toMatch(/already rotated/)
    const expired = await runCli(['key', 'rotate', org.apiKeyPrefix], env)
    expect(expired.code).toBe(1)
    expect(expired.stderr).toMatch(/revoked or expired/)
    expect((await runCli(['key', 'rotate', '6f1c2b8e-0000-4000-8000-000000000000'], env)).stderr).toMatch(/api key not found/)
    for (const args of [
      ['key', 'rotate', second.json().id, '--expire-old-in', '2592001'],
      ['key', 'rotate', second.json().id, '--expire-old-in', 'soon'],
      ['key', 'rotate', second.json().id, '--expire-old-in', '1.5'],
      ['key', 'rotate', 'not-a-key'],
      ['key', 'rotate'],
    ]) {
      const result = await runCli(args, env)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
    }

    const listed = (await runCli(['key', 'list', '--org', org.organisationId], env)).json().keys
    expect(listed.map((k: { expiresAt: string | null }) => k.expiresAt !== null)).toEqual([true, true, false])
    const handle = await openSameDatabase()
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), database: handle })
    try {
      const read = (key: string) => client(app, key).get(`/v3/organisations/${org.organisationId}`)
      expect((await read(org.apiKey)).statusCode).toBe(401)
      expect((await read(rotated.apiKey)).statusCode).toBe(200) // within its 24 hours
      expect((await read(second.json().apiKey)).statusCode).toBe(200)
    } finally {
      await app.close()
    }
  })

  it("imports the ECB's rates (validated whole, idempotent); the next quote uses them", async () => {
    const file = join(dataDir, 'eurofxref.csv')
    writeFileSync(file, DAILY)
    const imported = await runCli(['fx', 'import', file], env)
    expect(imported.stderr).toBe('')
    expect(imported.code).toBe(0)
    expect(imported.json()).toEqual({
      file: 'eurofxref.csv',
      dates: 1,
      rates: 29,
      changed: 29,
      firstDate: '2026-11-20',
      latestDate: '2026-11-20',
    })
    expect((await runCli(['fx', 'import', file], env)).json().changed).toBe(0)
    const bad = join(dataDir, 'bad-rates.csv')
    writeFileSync(bad, 'Date,USD,GBP,\n2026-11-21,1.2,0,\n')
    const refused = await runCli(['fx', 'import', bad], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/GBP: "0" is not a positive decimal rate/)
    expect((await runCli(['fx', 'import', join(dataDir, 'missing.csv')], env)).code).toBe(2)
    expect((await runCli(['fx', 'import'], env)).code).toBe(2)

    const org = (await runCli(['org', 'create', '--name', 'Zloty', '--country', 'POL', '--currency', 'PLN', '--mcc', '5992'], env)).json()
    expect(org.organisation.currencyCode).toBe('PLN')
    const handle = await openSameDatabase()
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), database: handle })
    try {
      const quote = await client(app, org.apiKey).post('/quotes/nature', {
        organisationId: org.organisationId,
        locale: 'en-GB',
        consumer: { reference: 'c', countryCode: 'POL' },
        transaction: { amount: 100, currencyCode: 'PLN' },
      })
      expect(quote.statusCode, quote.body).toBe(201)
      const stored = await findQuoteById(handle.db, quote.json().quoteId)
      // Nothing from the refused file (dated 2026-11-21) was stored.
      expect(stored?.locked.provenance.fx).toMatchObject({ from: 'PLN', date: '2026-11-20' })
    } finally {
      await app.close()
    }
  })

  it("org update sets, clears and resets an organisation's allowed origins; a child inherits its parent's", async () => {
    // Its own embedded data directory: independent of what the tests before it left running.
    const ownDir = mkdtempSync(join(tmpdir(), 'canopy-cli-origins-'))
    const env: Record<string, string> = onPostgres() ? { DATABASE_URL: database?.url ?? '' } : { DATA_DIR: ownDir }
    onTestFinished(() => rmSync(ownDir, { recursive: true, force: true }))
    const parent = (await runCli(['org', 'create', '--name', 'Origin Bank', '--country', 'GBR', '--currency', 'GBP'], env)).json()
    const child = (
      await runCli(
        ['org', 'create', '--name', 'Origin Shop', '--country', 'GBR', '--currency', 'GBP', '--parent', parent.organisationId],
        env,
      )
    ).json()
    const set = await runCli(
      ['org', 'update', parent.organisationId, '--allowed-origin', 'HTTPS://Shop.Example:443', '--allowed-origin', 'http://localhost:4000'],
      env,
    )
    expect(set.stderr).toBe('')
    expect(set.code).toBe(0)
    expect(set.json()).toMatchObject({
      organisationId: parent.organisationId,
      allowedOrigins: ['https://shop.example', 'http://localhost:4000'],
      effectiveAllowedOrigins: ['https://shop.example', 'http://localhost:4000'],
    })
    const inherited = await runCli(['org', 'update', child.organisationId, '--inherit-allowed-origins'], env)
    expect(inherited.json()).toMatchObject({
      allowedOrigins: null,
      effectiveAllowedOrigins: ['https://shop.example', 'http://localhost:4000'],
    })
    const cleared = await runCli(['org', 'update', child.organisationId, '--clear-allowed-origins'], env)
    expect(cleared.json()).toMatchObject({ allowedOrigins: [], effectiveAllowedOrigins: [] })

    // Usage errors exit 2 and change nothing; an unknown organisation is a failure (1).
    const usage = await Promise.all(
      [
        ['org', 'update', parent.organisationId],
        ['org', 'update', parent.organisationId, '--allowed-origin', 'https://*.shop.example', '--allowed-origin', 'null'],
        ['org', 'update', parent.organisationId, '--allowed-origin', 'https://a.example', '--clear-allowed-origins'],
        ['org', 'update', 'not-a-uuid', '--clear-allowed-origins'],
      ].map((args) => runCli(args, env)),
    )
    for (const result of usage) {
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toMatch(/Usage: npm run cli/)
    }
    expect(usage[1]?.stderr).toMatch(/allowed-origin.*must be an origin.*\/1: must not be null/s)
    const unknown = await runCli(['org', 'update', '6f1c2b8e-0000-4000-8000-000000000000', '--clear-allowed-origins'], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/organisation not found/)
  }, 180_000)

  it('report allocations writes the impact records of a window as CSV; bad windows exit non-zero', async () => {
    const created = await runCli(['org', 'create', '--name', 'Report Shop', '--country', 'GBR', '--currency', 'GBP', '--mcc', '5992'], env)
    expect(created.code).toBe(0)
    const { organisationId, apiKey } = created.json()
    expect((await runCli(['catalogue', 'import', '--demo'], env)).code).toBe(0)
    const handle = await openSameDatabase()
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), database: handle })
    let allocationId: string
    try {
      const api = client(app, apiKey)
      const quote = await api.post(
        '/quotes/carbon',
        floristQuote(organisationId, { consumer: { reference: '@risky', countryCode: 'GBR' } }),
      )
      expect(quote.statusCode).toBe(201)
      const allocation = await api.post(
        '/funds/allocations',
        { organisationId, quoteId: quote.json().quoteId, credits: { amount: 1.5 } },
        { 'idempotency-key': 'report-1' },
      )
      expect(allocation.statusCode).toBe(201)
      allocationId = allocation.json().fundsAllocationId
      expect((await api.post(`/funds/allocations/${allocationId}/reverse`)).statusCode).toBe(201)
    } finally {
      await app.close()
    }
    const from = new Date(Date.now() - 3_600_000).toISOString()
    const to = new Date(Date.now() + 3_600_000).toISOString()
    const report = await runCli(['report', 'allocations', '--from', from, '--to', to, '--organisation', organisationId], env)
    expect(report.stderr).toBe('')
    expect(report.code).toBe(0)
    const lines = report.stdout.split('\r\n').filter(Boolean)
    expect(lines[0]).toMatch(/^recordId,fundsAllocationId,reversalId,reversal,fundsDateTime,/)
    // The allocation's lines, then the reversal's (negated), each with the neutralised consumer reference.
    expect(lines.length).toBeGreaterThanOrEqual(3)
    expect(lines.slice(1).every((line) => line.includes(allocationId) && line.includes("'@risky"))).toBe(true)
    expect(lines.some((line) => /,true,.*,-\d+\.\d\d,/.test(line))).toBe(true)
    // Without --organisation: every tree, this one included.
    const all = await runCli(['report', 'allocations', '--from', from, '--to', to], env)
    expect(all.code).toBe(0)
    expect(all.stdout).toContain(allocationId)

    const backwards = await runCli(['report', 'allocations', '--from', to, '--to', from], env)
    expect(backwards.code).toBe(1)
    expect(backwards.stderr).toMatch(/before dateTimeTo/)
    const bad = await runCli(['report', 'allocations', '--from', 'yesterday', '--to', to], env)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--from must be an ISO 8601 date-time/)
  })

  it('summary rebuild rolls up every record again; summary verify and status report on the rollups', async () => {
    const rebuilt = await runCli(['summary', 'rebuild'], env)
    expect(rebuilt.stderr).toBe('')
    expect(rebuilt.code).toBe(0)
    expect(rebuilt.json()).toMatchObject({ caughtUp: true, busy: false, rolledUntil: expect.stringMatching(/Z$/) })
    const verified = await runCli(['summary', 'verify'], env)
    expect(verified.code).toBe(0)
    expect(verified.json()).toMatchObject({ ok: true, mismatches: [] })
  })

  it('org create|update set profit shares, billing and a root’s settlement model; report profit-share writes the lines', async () => {
    const root = await runCli(
      [
        'org',
        'create',
        '--name',
        'Share PSP',
        '--country',
        'GBR',
        '--currency',
        'GBP',
        '--relative-profit-share',
        '0.2',
        '--settlement-model',
        'net',
      ],
      env,
    )
    expect(root.stderr).toBe('')
    expect(root.json().organisation).toMatchObject({ relativeProfitShare: 0.2, proportionalProfitShare: 0.2, settlementModel: 'net' })
    const args = ['--country', 'GBR', '--currency', 'GBP', '--mcc', '5992', '--parent', root.json().organisationId]
    const child = await runCli(
      ['org', 'create', '--name', 'Share Shop', ...args, '--relative-profit-share', '0.6', '--billing-currency', 'USD'],
      env,
    )
    const { organisationId, apiKey } = child.json()
    expect(child.json().organisation).toMatchObject({
      proportionalProfitShare: 0.12,
      exactProportionalProfitShare: '0.12',
      settlementModel: 'net',
      billing: { currencyCode: 'USD', countryCode: 'GBR' },
    })
    const refused = await runCli(['org', 'update', organisationId, '--relative-profit-share', '1.5'], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/relativeProfitShare must be a number from 0 to 1/)

    // The demo catalogue was imported by the test before.
    const handle = await openSameDatabase()
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), database: handle })
    let allocationId: string
    try {
      const api = client(app, apiKey)
      const quote = (await api.post('/quotes/carbon', floristQuote(organisationId))).json()
      const allocation = await api.post(
        '/funds/allocations',
        { organisationId, quoteId: quote.quoteId, contribution: { amount: 12.4 } },
        { 'idempotency-key': 'share-1' },
      )
      expect(allocation.statusCode).toBe(201)
      allocationId = allocation.json().fundsAllocationId
    } finally {
      await app.close()
    }
    const from = new Date(Date.now() - 3_600_000).toISOString()
    const to = new Date(Date.now() + 3_600_000).toISOString()
    const report = await runCli(['report', 'profit-share', '--from', from, '--to', to, '--organisation', root.json().organisationId], env)
    expect(report.stderr).toBe('')
    const lines = report.stdout.split('\r\n').filter(Boolean)
    expect(lines[0]).toMatch(/^recordId,.*,settlementModel,serviceFee,platformProfitShare,beneficiaryOrganisationId,/)
    expect(lines.slice(1).map((line) => line.split(',').slice(-6, -3))).toEqual([
      ['0.16', 'GBP', '1'],
      // The rate of the exchange rates in use (a test before imports the ECB's), to 10 significant digits.
      ['0.24', 'USD', expect.stringMatching(/^1\.\d{9}$/)],
    ])
    expect(lines.slice(1).every((line) => line.includes(allocationId) && line.includes(',net,2.00,1.60,'))).toBe(true)
  })

  it('prints usage with --help', async () => {
    const result = await runCli(['--help'], env)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/org create --name/)
  })
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
