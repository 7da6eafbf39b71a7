// The Hub in a real browser (issue 19): Debian's Chromium via playwright-core against the API in this process. One
// browser for the file; the admin's sign-in is shared. Sets a password from an invite link, signs in, uses every
// console page (keys and webhooks by keyboard only), enrols TOTP and signs in with it, refuses an analyst in the page
// and at the server, refuses a CSRF attempt from another origin and an allowlisted key from another address, checks
// axe WCAG 2.2 AA on every page, and writes the screenshots of docs/hub/.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { totpCode } from '../../src/services/hub/credentials.js'
import { HubAssets } from '../../src/services/hub-assets.js'
import { createUserAsOperator } from '../../src/services/hub/users.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { createOrg, type OrgFixture } from '../helpers/factories.js'
import { repoRoot } from '../helpers/process.js'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { describeInBrowser, expectAccessible, expectCellsLabelled, launchChromium, recordCspViolations } from './harness.js'

const LONG = 180_000
// UPDATE_SCREENSHOTS=1 rewrites docs/hub/*.png; otherwise they go to a temporary folder.
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(repoRoot, 'docs', 'hub') : mkdtempSync(join(tmpdir(), 'canopy-hub-shots-'))
const PASSWORD = 'moss lantern quietly 2026'
const ADMIN = 'ada.admin@blossom.example'

let hubDir: string
let t: TestApp
let base: string
let org: OrgFixture
let child: OrgFixture
let browser: Browser
let admin: { context: BrowserContext; page: Page }
let receiver: WebhookReceiver
let elsewhere: { url: string; close(): Promise<void> }

/** A set-password link as the operator prints it, pointed at this test's server. */
const linkFor = (url: string) => url.replace(/^https?:\/\/[^/]+/, base)

async function openContext(locale = 'en-GB', width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, locale, reducedMotion: 'reduce' })
  const page = await context.newPage()
  page.setDefaultTimeout(30_000)
  page.on('dialog', (dialog) => void dialog.accept())
  await recordCspViolations(page)
  return { context, page }
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${base}/hub/sign-in`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

async function setPassword(page: Page, link: string, password: string): Promise<void> {
  await page.goto(linkFor(link))
  await page.getByRole('heading', { name: 'Set your password' }).waitFor()
  await page.getByLabel('New password').fill(password)
  await page.getByLabel('Repeat the password').fill(password)
  await page.getByRole('button', { name: 'Set password' }).click()
  await page.getByRole('heading', { name: 'Your password is set' }).waitFor()
}

const go = async (page: Page, name: string) => {
  await page.getByRole('navigation', { name: 'Hub' }).getByRole('link', { name, exact: true }).click()
  await page.getByRole('heading', { level: 1 }).first().waitFor()
}

describeInBrowser('the Hub in Chromium', () => {
  beforeAll(async () => {
    hubDir = mkdtempSync(join(tmpdir(), 'canopy-hub-'))
    execFileSync(process.execPath, [join(repoRoot, 'hub/build.mjs'), '--outdir', hubDir], { stdio: 'pipe' })
    t = await createTestApp(
      { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_INTERVAL_MS: '100' },
      { hubAssets: new HubAssets(hubDir) },
    )
    // The browser judges expiry by its own clock: run the app's at the real time.
    t.clock.advance(Date.now() - t.clock.now().getTime())
    base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1')
    org = await createOrg(t.db, { tradingName: 'Blossom & Bloom Gartengestaltung und Landschaftsarchitektur GmbH & Co. KG (demo)' })
    child = await createOrg(t.db, { parentId: org.organisationId, tradingName: 'Blossom & Bloom Zweigniederlassung Nordrhein-Westfalen' })
    receiver = await startReceiver()
    elsewhere = await startForeignPage()
    browser = await launchChromium()
    // The first admin, made by the operator; the browser sets the password from the link.
    const created = await createUserAsOperator(
      t.db,
      { organisationId: org.organisationId, email: ADMIN, role: 'admin' },
      { now: t.clock.now(), publicBaseUrl: 'http://127.0.0.1:3000' },
    )
    admin = await openContext()
    await setPassword(admin.page, created.setPasswordUrl, PASSWORD)
    await shot(admin.page, 'set-password-done')
    await signIn(admin.page, ADMIN, PASSWORD)
    await admin.page.getByRole('heading', { level: 1, name: /Blossom & Bloom/ }).waitFor()
  }, LONG)

  afterAll(async () => {
    await browser?.close()
    await Promise.all([receiver?.close(), elsewhere?.close()])
    await t?.close()
    rmSync(hubDir, { recursive: true, force: true })
  }, LONG)

  it(
    'shows the sign-in and set-password pages accessibly, and refuses a wrong password without saying which part',
    async () => {
      const { context, page } = await openContext()
      try {
        await page.goto(`${base}/hub`)
        await page.getByRole('button', { name: 'Sign in' }).waitFor()
        await expectAccessible(page, 'sign in')
        await shot(page, 'sign-in')
        await signIn(page, ADMIN, 'not my password at all')
        await expect.poll(() => page.getByRole('alert').textContent()).toBe('the e-mail address or the password is not right')
        const invited = await createUserAsOperator(
          t.db,
          { organisationId: org.organisationId, email: 'new.developer@blossom.example', role: 'developer' },
          { now: t.clock.now(), publicBaseUrl: base },
        )
        await page.goto(linkFor(invited.setPasswordUrl))
        await page.getByLabel('New password').fill('short')
        await page.getByLabel('Repeat the password').fill('short')
        await page.getByRole('button', { name: 'Set password' }).click()
        await expect.poll(() => page.locator('.field-error').textContent()).toBe('must be at least 12 characters')
        await expectAccessible(page, 'set password with an error')
        await shot(page, 'set-password')
        const headers = (await page.request.get(`${base}/hub/users`)).headers()
        expect(headers['content-security-policy']).toBe(
          "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        )
        expect(headers['referrer-policy']).toBe('no-referrer')
      } finally {
        await context.close()
      }
    },
    LONG,
  )

  it(
    'manages API keys by keyboard only: create (shown once), rotate with a grace period, revoke',
    async () => {
      const { page } = admin
      await go(page, 'API keys')
      await shot(page, 'api-keys')
      await expectAccessible(page, 'api keys')
      // Keyboard only from here.
      await page.getByLabel('Mode').focus()
      await page.keyboard.press('Tab')
      await page.keyboard.press('Enter')
      const secret = page.getByRole('textbox', { name: 'Your new API key' })
      await secret.waitFor()
      const key = await secret.inputValue()
      expect(key).toMatch(/^ck_live_[0-9A-Za-z]{40}$/)
      expect((await fetch(`${base}/v3/organisations/${org.organisationId}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(
        200,
      )
      await expectAccessible(page, 'api key shown once')
      await shot(page, 'api-keys-created')
      await page.getByRole('button', { name: 'Done' }).focus()
      await page.keyboard.press('Enter')
      const prefix = key.slice(0, 16)
      await page.getByLabel(`Grace period for ${prefix}`).focus()
      await page.keyboard.press('End')
      await page.getByRole('button', { name: `Rotate ${prefix}` }).focus()
      await page.keyboard.press('Enter')
      const rotated = await page.getByRole('textbox', { name: 'Your new API key' }).inputValue()
      expect(rotated).not.toBe(key)
      await expect.poll(() => page.getByRole('row', { name: new RegExp(prefix) }).textContent()).toMatch(/Rotated: works until/)
      await page.getByRole('button', { name: 'Done' }).press('Enter')
      await page.getByRole('button', { name: `Revoke ${rotated.slice(0, 16)}` }).focus()
      await page.keyboard.press('Enter')
      await expect.poll(() => page.getByRole('row', { name: new RegExp(rotated.slice(0, 16)) }).textContent()).toContain('Revoked')
      expect(
        (await fetch(`${base}/v3/organisations/${org.organisationId}`, { headers: { authorization: `Bearer ${rotated}` } })).status,
      ).toBe(401)
    },
    LONG,
  )

  it(
    'manages webhooks by keyboard only: create (secret shown once), test, deliveries with attempts, retry, disable',
    async () => {
      const { page } = admin
      await go(page, 'Webhooks')
      await expectAccessible(page, 'webhooks, empty')
      await shot(page, 'webhooks-empty')
      await page.getByLabel('Endpoint URL').focus()
      await page.keyboard.type(`${receiver.url}/blossom`)
      await page.keyboard.press('Tab')
      await page.keyboard.type('Order system (Produktion)')
      await page.keyboard.press('Enter')
      const secret = await page.getByRole('textbox', { name: 'Signing secret of the new endpoint' }).inputValue()
      expect(secret).toMatch(/^whsec_/)
      await page.getByRole('button', { name: 'Done' }).press('Enter')
      await page.getByRole('button', { name: 'Send test event' }).focus()
      await page.keyboard.press('Enter')
      await receiver.waitFor(1)
      // The receiver has the request before the worker records its outcome (written in batches): refresh until it shows.
      await expect
        .poll(async () => {
          await page.getByRole('button', { name: 'Refresh deliveries' }).press('Enter')
          return page.getByRole('row', { name: /webhook_endpoint\.test/ }).textContent()
        })
        .toMatch(/succeeded.*200/)
      await page.getByRole('button', { name: 'Retry webhook_endpoint.test' }).press('Enter')
      await receiver.waitFor(2)
      await page.getByRole('button', { name: 'Rotate signing secret' }).press('Enter')
      expect(await page.getByRole('textbox', { name: /New signing secret/ }).inputValue()).toMatch(/^whsec_/)
      await page.getByRole('button', { name: 'Done' }).press('Enter')
      await expectAccessible(page, 'webhooks with deliveries')
      await shot(page, 'webhooks')
      await page.getByRole('button', { name: 'Disable endpoint' }).press('Enter')
      await page.getByText('Disabled', { exact: true }).waitFor()
    },
    LONG,
  )

  it(
    'edits allowed origins and the IP allowlist (errors next to the field); an allowlisted key is refused from another address',
    async () => {
      const { page } = admin
      await go(page, 'Allowed origins')
      await page.getByLabel('Use the list of the organisation above').uncheck()
      await page.getByLabel('Origins, one per line').fill('https://shop.blossom.example\nhttps://shop.blossom.example/path')
      await page.getByRole('button', { name: 'Save allowed origins' }).click()
      await expect.poll(() => page.locator('.field-error').textContent()).toContain('Line 2')
      await page.getByLabel('Origins, one per line').fill('https://shop.blossom.example\nhttp://localhost:4000')
      await page.getByRole('button', { name: 'Save allowed origins' }).click()
      await page.getByText('Saved.').waitFor()
      await expectAccessible(page, 'allowed origins')
      await shot(page, 'allowed-origins')

      const key = (
        await t.app.inject({
          method: 'POST',
          url: '/v3/api-keys',
          headers: { authorization: `Bearer ${org.apiKey}` },
          payload: { organisationId: child.organisationId },
        })
      ).json().apiKey
      await go(page, 'IP allowlist')
      await page.getByLabel('Use the list of the organisation above').uncheck()
      await page.getByRole('switch', { name: 'Allowlist on' }).check()
      await page.getByLabel('Allowed addresses, one per line').fill('203.0.113.0/24\n10.1.2.3/8\nnot-an-address')
      await page.getByRole('button', { name: 'Save IP allowlist' }).click()
      await expect.poll(() => page.locator('.field-error').textContent()).toContain('Line 3 (not-an-address)')
      await page.getByLabel('Allowed addresses, one per line').fill('203.0.113.0/24\n10.1.2.3/8')
      await page.getByRole('button', { name: 'Save IP allowlist' }).click()
      await page.getByText('Saved.').waitFor()
      expect(await page.getByLabel('Allowed addresses, one per line').inputValue()).toBe('203.0.113.0/24\n10.0.0.0/8')
      await expectAccessible(page, 'ip allowlist')
      await shot(page, 'ip-allowlist')
      // The child inherits the list: its key from this machine's 127.0.0.1 is refused.
      const refused = await fetch(`${base}/v3/organisations/${child.organisationId}`, { headers: { authorization: `Bearer ${key}` } })
      expect(refused.status).toBe(403)
      expect((await refused.json()).code).toBe('IP_NOT_ALLOWED')
      await page.getByLabel('Use the list of the organisation above').check()
      await page.getByRole('button', { name: 'Save IP allowlist' }).click()
      await page.getByText('Saved.').waitFor()
    },
    LONG,
  )

  it(
    'creates, deactivates and reactivates a child organisation, and switches into it',
    async () => {
      const { page } = admin
      await go(page, 'Organisations')
      await page.getByLabel('Trading name').fill('Blossom & Bloom Filiale Süd')
      await page.getByLabel('Address', { exact: true }).fill('Blumenstraße 1')
      await page.getByLabel('City').fill('München')
      await page.getByLabel('Postal code').fill('80331')
      await page.getByLabel('Country (ISO alpha-3)').fill('DEU')
      await page.getByLabel('Currency (ISO 4217)').fill('XXX')
      await page.getByRole('button', { name: 'Add organisation' }).click()
      await expect.poll(() => page.locator('.field-error').textContent()).toContain('XXX')
      await page.getByLabel('Currency (ISO 4217)').fill('EUR')
      await page.getByRole('button', { name: 'Add organisation' }).click()
      await page.getByRole('button', { name: 'Deactivate Blossom & Bloom Filiale Süd' }).click()
      await page.getByRole('button', { name: 'Reactivate Blossom & Bloom Filiale Süd' }).waitFor()
      await expectAccessible(page, 'organisations')
      await shot(page, 'organisations')
      await page.getByRole('button', { name: 'Reactivate Blossom & Bloom Filiale Süd' }).click()
      await page.getByRole('button', { name: 'Deactivate Blossom & Bloom Filiale Süd' }).waitFor()
      const branch = (await page.locator('#organisation-switcher option', { hasText: 'Filiale Süd' }).getAttribute('value')) ?? ''
      await page.getByLabel('Organisation', { exact: true }).selectOption(branch)
      await go(page, 'API keys')
      await page.getByText('This organisation has no API keys yet.').waitFor()
      await shot(page, 'api-keys-empty')
      await page.getByLabel('Organisation', { exact: true }).selectOption(org.organisationId)
    },
    LONG,
  )

  it(
    'invites an analyst who is refused the keys page in the browser and by the server, and reads the audit log',
    async () => {
      const { page } = admin
      await go(page, 'Users')
      await page.getByLabel('Email').fill('ana.lyst@blossom.example')
      await page.getByLabel('Role', { exact: true }).selectOption('analyst')
      await page.getByRole('button', { name: 'Invite' }).click()
      const link = await page.getByRole('textbox', { name: /One-time link/ }).inputValue()
      await expectAccessible(page, 'users')
      await shot(page, 'users')
      await page.getByRole('button', { name: 'Done' }).click()

      const analyst = await openContext('de-DE', 390)
      try {
        await setPassword(analyst.page, link, 'fern window copper 1987')
        await signIn(analyst.page, 'ana.lyst@blossom.example', 'fern window copper 1987')
        await analyst.page.getByRole('heading', { level: 1, name: /Blossom & Bloom/ }).waitFor()
        expect(await analyst.page.getByRole('navigation', { name: 'Hub' }).getByRole('link').allTextContents()).toEqual([
          'Overview',
          'Dashboard',
          'Allocations',
          'Your account',
        ])
        await expectAccessible(analyst.page, 'analyst overview (de-DE, narrow)')
        await shot(analyst.page, 'overview-analyst-narrow-de')
        await analyst.page.goto(`${base}/hub/api-keys`)
        await analyst.page.getByRole('heading', { name: 'Not available for your role' }).waitFor()
        await shot(analyst.page, 'refused-analyst')
        const status = await analyst.page.evaluate(
          async (id) => (await fetch(`/hub/api/api-keys?organisationId=${id}`)).status,
          org.organisationId,
        )
        expect(status).toBe(403)
      } finally {
        await analyst.context.close()
      }

      await go(page, 'Audit log')
      await page.getByLabel('Type').selectOption('user.invited')
      await page
        .getByRole('row', { name: /ana\.lyst@blossom\.example/ })
        .first()
        .waitFor()
      await page.getByLabel('Type').selectOption('')
      await page
        .getByRole('row', { name: /api_key\.rotated/ })
        .first()
        .waitFor()
      await expectAccessible(page, 'audit log')
      // Wide, the thead names the columns: no cell repeats its name.
      expect(await expectCellsLabelled(page, false, 'audit log, wide')).toBeGreaterThan(0)
      await shot(page, 'audit-log')
      await go(page, 'Overview')
      await expectAccessible(page, 'overview')
      await shot(page, 'overview')
    },
    LONG,
  )

  it(
    'names each value’s column in every table at 390 px, where the thead is hidden',
    async () => {
      const { page } = admin
      await page.setViewportSize({ width: 390, height: 900 })
      try {
        for (const name of ['API keys', 'Webhooks', 'Organisations', 'Users', 'Audit log']) {
          await go(page, name)
          if (name === 'Webhooks') await page.getByRole('button', { name: 'Show deliveries' }).first().press('Enter')
          await page.locator('.table-wrap tbody tr').first().waitFor()
          expect(await expectCellsLabelled(page, true, `${name}, narrow`), name).toBeGreaterThan(0)
          await expectAccessible(page, `${name}, narrow`)
        }
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 })
      }
    },
    LONG,
  )

  it(
    'refuses a CSRF attempt from a page on another origin',
    async () => {
      const before = (
        await t.db
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n
      const page = await admin.context.newPage()
      try {
        await page.goto(`${elsewhere.url}/?target=${encodeURIComponent(`${base}/hub/api/api-keys`)}&organisation=${org.organisationId}`)
        await page.locator('#attack').click()
        await page.waitForURL(`${base}/hub/api/api-keys`)
        expect(await page.locator('body').textContent()).toContain('CSRF_REFUSED')
      } finally {
        await page.close()
      }
      expect(
        (
          await t.db
            .selectFrom('api_keys')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ).toBe(before)
    },
    LONG,
  )

  it(
    'enrols a second factor (recovery codes shown once), and signs in with it',
    async () => {
      const { context, page } = await openContext()
      try {
        await signIn(page, ADMIN, PASSWORD)
        await page.getByRole('link', { name: 'Your account' }).click()
        await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
        const secret = (await page.locator('.secret-key').textContent()) ?? ''
        await expectAccessible(page, 'totp enrolment')
        await shot(page, 'account-totp')
        await page.getByLabel('Authentication code').fill(totpCode(secret, t.clock.now()))
        await page.getByRole('button', { name: 'Turn on' }).click()
        await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor()
        expect(await page.locator('.codes li').count()).toBe(10)
        await page.getByRole('button', { name: 'I have saved them' }).click()
        t.clock.advance(30_000)
        // The admin's other browser was signed out when the factor was turned on.
        await page.getByRole('button', { name: 'Sign out', exact: true }).click()
        await signIn(page, ADMIN, PASSWORD)
        await page.getByLabel('Authentication code').fill(totpCode(secret, t.clock.now()))
        await expectAccessible(page, 'second factor')
        await shot(page, 'sign-in-second-factor')
        await page.getByRole('button', { name: 'Verify' }).click()
        await page.getByRole('heading', { level: 1, name: /Blossom & Bloom/ }).waitFor()
      } finally {
        await context.close()
      }
    },
    LONG,
  )
})

/** A page on another origin (localhost, another port) with a form that posts to the Hub. */
async function startForeignPage(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const params = new URL(req.url ?? '/', 'http://x').searchParams
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><html lang="en"><head><title>Elsewhere</title></head><body>
<form method="post" action="${params.get('target') ?? ''}" enctype="text/plain">
<input type="hidden" name='{"organisationId":"${params.get('organisation') ?? ''}","x":"' value='"}'>
<button id="attack" type="submit">Win a prize</button></form></body></html>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
