// Real-browser tests (issue 14, item 8): Debian's Chromium driven by playwright-core, against the API and the demo
// shop in this process on 127.0.0.1, and a strict-CSP page on a second origin. No browser is ever downloaded.
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import AxeBuilder from '@axe-core/playwright'
import { chromium, type Browser, type Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'

export const CHROMIUM = '/usr/bin/chromium'
export const chromiumInstalled = existsSync(CHROMIUM)

/**
 * describe() for browser tests: skipped with a visible notice where Chromium is missing, except under CI=true,
 * where a missing browser is a failure (.ci/run installs it).
 */
export function describeInBrowser(name: string, body: () => void): void {
  if (chromiumInstalled) {
    describe(name, body)
    return
  }
  const notice = `browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (Debian's package)`
  if (process.env.CI === 'true') {
    describe(name, () => it('has Chromium installed', () => Promise.reject(new Error(notice))))
    return
  }
  console.warn(`\n⚠  SKIPPED: ${name}: ${notice}\n`)
  describe.skip(name, body)
}

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    // playwright adds --headless and --no-sandbox itself.
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-sync',
      '--disable-background-networking',
      '--disable-component-update',
    ],
    timeout: 120_000,
  })

/** The Content-Security-Policy of issue 14, item 4: the page allows the API origin and nothing else. */
export const strictCsp = (apiOrigin: string) =>
  `default-src 'none'; script-src ${apiOrigin}; style-src 'self'; connect-src ${apiOrigin}; img-src ${apiOrigin} data:`

/**
 * A merchant page under the strict CSP that only loads the SDK from the API; the tests drive the SDK through
 * page.evaluate (DevTools evaluation, which a page's CSP does not govern — no inline script is needed).
 */
export async function startStrictPage(apiOrigin: string): Promise<{ url: string; close(): Promise<void> }> {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Strict CSP merchant page</title><link rel="stylesheet" href="/page.css"></head>
<body>
<main>
<h1>Order confirmation</h1>
<button type="button" id="before">Before the widget</button>
<div id="mount"></div>
<button type="button" id="after">After the widget</button>
</main>
<script src="${apiOrigin}/js/v3/canopy.js"></script>
</body>
</html>`
  const server: Server = createServer((req, res) => {
    if (req.url === '/' || req.url?.startsWith('/?')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': strictCsp(apiOrigin) })
      res.end(html)
    } else if (req.url === '/page.css') {
      // The page's own controls meet the target size too (WCAG 2.5.8), so that axe judges the widget alone.
      res.writeHead(200, { 'content-type': 'text/css; charset=utf-8' })
      res.end('body { font-family: sans-serif; } button { min-height: 44px; min-width: 44px; margin: 8px 0; }')
    } else {
      res.writeHead(204)
      res.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    // localhost: another host than the API's 127.0.0.1, as well as another port.
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** axe's rule tags for WCAG 2.2 AA. */
export const WCAG_22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']

/** Collects the page's Content-Security-Policy violations (for expectAccessible); call before the first navigation. */
export async function recordCspViolations(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen: string[] = []
    Object.defineProperty(window, '__violations', { value: seen })
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`))
  })
}

/** No axe WCAG 2.2 AA violation on the page as it stands, and no CSP violation since recordCspViolations. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(WCAG_22_AA).analyze()
  expect(
    results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    label,
  ).toEqual([])
  expect(await page.evaluate(() => (window as { __violations?: string[] }).__violations), `${label}: CSP violations`).toEqual([])
}

/**
 * The column names of the Hub's tables in the layout as it stands: narrow (hub/src/styles.css, at most 800 px), where
 * the thead is hidden, every data cell must show its column's header before its value (its ::before); wide, none may.
 * Row headers (th scope="row") are their row's title and show nothing. Returns how many data cells were checked.
 */
export async function expectCellsLabelled(page: Page, narrow: boolean, label: string): Promise<number> {
  const cells = await page.evaluate(() =>
    // The Hub's data tables, each in a .table-wrap (not uPlot's legend, a table of its own).
    [...document.querySelectorAll('.table-wrap table')].flatMap((table) => {
      const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent?.trim() ?? '')
      return [...table.querySelectorAll('tbody tr')].flatMap((row) =>
        [...row.children].map((cell, column) => ({
          table: (table as HTMLTableElement).caption?.textContent ?? '',
          header: headers[column] ?? '',
          rowHeader: cell.tagName === 'TH',
          // As Chromium computes it, e.g. `"Credits" / ""`: the text shown, then its alternative text.
          before: getComputedStyle(cell, '::before').content,
        })),
      )
    }),
  )
  const shown = (before: string) => (before.startsWith('"') ? (JSON.parse(/^"(?:[^"\\]|\\.)*"/.exec(before)?.[0] ?? '""') as string) : '')
  expect(
    cells.map((c) => `${c.table} / ${c.header}: ${shown(c.before)}`),
    label,
  ).toEqual(cells.map((c) => `${c.table} / ${c.header}: ${narrow && !c.rowHeader ? c.header : ''}`))
  return cells.filter((c) => !c.rowHeader).length
}
