// A small merchant site on its own origin, using Canopy as a merchant would (issue 14, item 7; README "Try it
// in a browser"): a product page, a checkout with the checkout widget, a fake payment, an allocation with an
// Idempotency-Key from this backend, and an order confirmation with the embedded post-purchase widget.
// The API key stays on this server: the browser only ever gets a session id and its client secret.
// node:http and the Canopy Node client (clients/node); the pages are plain HTML with two small scripts under a strict
// Content-Security-Policy.
import { Canopy, fromMinorUnits, toMinorUnits } from '@canopy-climate/node'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { join } from 'node:path'

export interface ShopOptions {
  /** The Canopy API, as the browser and this server reach it: "http://127.0.0.1:3000". */
  apiBase: string
  organisationId: string
  /** The merchant's API key: used by this server only. */
  apiKey: string
  port?: number
  host?: string
  /** How browsers name this shop, for links (default http://localhost:<port>). */
  publicOrigin?: string
}

export interface Shop {
  url: string
  close(): Promise<void>
}

interface Choice {
  credits: string | null
  contribution: string | null
}

interface Order {
  id: string
  quantity: number
  locale: string
  totalMinor: number
  checkout: { sessionId: string; clientSecret: string; quoteId: string }
  paid?: {
    impactMinor: number
    choice: Choice
    fundsAllocationId: string | null
    postPurchase: { sessionId: string; clientSecret: string; quoteId: string }
    postPurchaseAllocationId?: string
  }
}

const PRODUCT = { name: 'Terracotta plant pot, medium', unitMinor: 1599, currencyCode: 'GBP' }
/** The contributions this shop offers, in both widgets. */
const CONTRIBUTIONS = ['1.00', '2.00']
const LOCALES = ['en-GB', 'en-US', 'de-DE']
const PUBLIC = join(import.meta.dirname, 'public')
const STATIC: Record<string, string> = {
  '/static/checkout.js': 'text/javascript; charset=utf-8',
  '/static/confirmation.js': 'text/javascript; charset=utf-8',
  '/static/shop.css': 'text/css; charset=utf-8',
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c)
/** 4797 → "47.97": amounts go to Canopy as exact decimal strings. */
const decimal = (minor: number) => fromMinorUnits(minor, PRODUCT.currencyCode)
/** "1.00" → 100; undefined for anything that is not an amount with two decimals. */
const toMinor = (value: unknown) =>
  typeof value === 'string' && /^\d{1,6}\.\d{2}$/.test(value) ? toMinorUnits(value, PRODUCT.currencyCode) : undefined
const money = (minor: number, locale: string) =>
  new Intl.NumberFormat(locale, { style: 'currency', currency: PRODUCT.currencyCode }).format(minor / 100)

export async function startShop(options: ShopOptions): Promise<Shop> {
  const api = options.apiBase.replace(/\/+$/, '')
  const orders = new Map<string, Order>()

  const csp = [
    "default-src 'none'",
    `script-src 'self' ${api}`,
    "style-src 'self'",
    `connect-src 'self' ${api}`,
    `img-src 'self' ${api} data:`,
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ')

  /** The Canopy API, with the merchant's key: this server only. */
  const canopy = new Canopy({ apiKey: options.apiKey, baseUrl: api })

  const createSession = async (kind: 'checkout' | 'post-purchase', order: Pick<Order, 'id' | 'locale' | 'totalMinor'>) => {
    const request = {
      organisationId: options.organisationId,
      locale: order.locale,
      consumer: { reference: `shopper-${order.id}`, countryCode: 'GBR', postalCode: 'SW1A 1AA', city: 'London' },
      transaction: { amount: decimal(order.totalMinor), currencyCode: PRODUCT.currencyCode },
      orderItems: [
        {
          itemReference: 'line_1',
          sku: 'POT_MEDIUM',
          quantity: order.totalMinor / PRODUCT.unitMinor,
          unitPrice: { value: decimal(PRODUCT.unitMinor), currencyCode: PRODUCT.currencyCode },
        },
      ],
    }
    const { sessionId, clientSecret, quoteId } =
      kind === 'checkout'
        ? await canopy.sessions.createCheckout(request)
        : await canopy.sessions.createPostPurchase({ ...request, sdkVariant: 'embedded' })
    return { sessionId, clientSecret, quoteId }
  }

  /**
   * Events from the widget are advisory: the backend checks the amounts against what it offered before charging.
   * Credits must be the quote's credits total; a contribution one of the amounts offered or the round-up.
   */
  async function checkChoice(quoteId: string, choice: Choice, orderTotalMinor: number | null): Promise<number> {
    let impactMinor = 0
    if (choice.credits !== null) {
      const quote = await canopy.quotes.retrieve(quoteId)
      const minor = toMinor(choice.credits)
      if (minor === undefined || !('credits' in quote) || minor !== toMinorUnits(quote.credits.amounts.total, quote.currencyCode)) {
        throw new Error('credits amount is not the quote total')
      }
      impactMinor += minor
    }
    if (choice.contribution !== null) {
      const minor = toMinor(choice.contribution)
      const roundUp = orderTotalMinor === null ? 0 : Math.ceil(orderTotalMinor / 100) * 100 - orderTotalMinor
      if (minor === undefined || !(CONTRIBUTIONS.map(toMinor).includes(minor) || (roundUp > 0 && minor === roundUp))) {
        throw new Error('contribution amount was not offered')
      }
      impactMinor += minor
    }
    return impactMinor
  }

  /**
   * POST /funds/allocations, idempotent by the order: a retried payment never allocates twice, and the client retries
   * a lost answer with the same key. Amounts go as the exact strings the widget reported ("1.00").
   */
  async function allocate(quoteId: string, choice: Choice, idempotencyKey: string): Promise<string | null> {
    if (choice.credits === null && choice.contribution === null) return null
    const allocation = await canopy.allocations.create(
      {
        organisationId: options.organisationId,
        quoteId,
        ...(choice.credits === null ? {} : { credits: { amount: choice.credits } }),
        ...(choice.contribution === null ? {} : { contribution: { amount: choice.contribution } }),
      },
      { idempotencyKey },
    )
    return allocation.fundsAllocationId
  }

  const page = (res: ServerResponse, title: string, locale: string, main: string, scripts: string[] = []) => {
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': csp,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'strict-origin-when-cross-origin',
    })
    res.end(`<!doctype html>
<html lang="${escape(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Blossom &amp; Bloom (demo shop)</title>
<link rel="stylesheet" href="/static/shop.css">
</head>
<body>
<header><a href="/?locale=${escape(locale)}" class="brand">Blossom &amp; Bloom</a> <span class="note">a demo shop for Canopy</span></header>
${main}
${scripts.map((src) => `<script src="${escape(src)}"></script>`).join('\n')}
</body>
</html>
`)
  }

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
    res.end(JSON.stringify(body))
  }
  const notFound = (res: ServerResponse) => {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
    res.end('not found')
  }
  const readBody = async (req: IncomingMessage): Promise<string> => {
    let body = ''
    for await (const chunk of req) {
      body += chunk
      if (body.length > 10_000) throw new Error('body too large')
    }
    return body
  }
  const localeOf = (value: string | null | undefined) => (value && LOCALES.includes(value) ? value : 'en-GB')

  function productPage(res: ServerResponse, locale: string) {
    page(
      res,
      PRODUCT.name,
      locale,
      `<main class="product">
<h1>${escape(PRODUCT.name)}</h1>
<p>Hand-thrown terracotta, 18 cm across, with a drainage hole and saucer.</p>
<p class="price">${escape(money(PRODUCT.unitMinor, locale))}</p>
<form method="post" action="/checkout">
<input type="hidden" name="locale" value="${escape(locale)}">
<label for="quantity">Quantity</label>
<input id="quantity" name="quantity" type="number" min="1" max="20" value="3" required>
<button type="submit" id="buy">Go to checkout</button>
</form>
<p class="note">Language: ${LOCALES.map((l) => `<a href="/?locale=${l}" lang="${l}">${l}</a>`).join(' · ')}</p>
</main>`,
    )
  }

  function checkoutPage(res: ServerResponse, order: Order) {
    page(
      res,
      'Checkout',
      order.locale,
      `<main class="checkout" data-order-id="${escape(order.id)}" data-session-id="${escape(order.checkout.sessionId)}"
  data-client-secret="${escape(order.checkout.clientSecret)}" data-order-total="${decimal(order.totalMinor)}"
  data-locale="${escape(order.locale)}" data-contributions="${CONTRIBUTIONS.join(' ')}">
<h1>Checkout</h1>
<p>${order.quantity} × ${escape(PRODUCT.name)}: <span id="subtotal">${escape(money(order.totalMinor, order.locale))}</span></p>
<section id="impact" aria-label="Climate impact"></section>
<p class="total">Total: <strong id="total" aria-live="polite">${escape(money(order.totalMinor, order.locale))}</strong></p>
<button type="button" id="pay">Pay (demo card, nothing is charged)</button>
<p id="status" role="status"></p>
</main>`,
      [`${api}/js/v3/canopy.js`, '/static/checkout.js'],
    )
  }

  function confirmationPage(res: ServerResponse, order: Order) {
    const paid = order.paid
    if (!paid) return notFound(res)
    const impact = paid.impactMinor
      ? `<p>Climate impact added: <strong>${escape(money(paid.impactMinor, order.locale))}</strong>, allocated with Canopy
  (<code id="allocation">${escape(paid.fundsAllocationId ?? '')}</code>).</p>`
      : '<p>No climate impact was added at checkout.</p>'
    page(
      res,
      'Order confirmed',
      order.locale,
      `<main class="confirmation" data-order-id="${escape(order.id)}" data-allocation-id="${escape(paid.fundsAllocationId ?? '')}"
  data-session-id="${escape(paid.postPurchase.sessionId)}" data-client-secret="${escape(paid.postPurchase.clientSecret)}"
  data-locale="${escape(order.locale)}" data-contributions="${CONTRIBUTIONS.join(' ')}">
<h1>Thank you: your order is confirmed</h1>
<p>Order <code>${escape(order.id)}</code>: ${order.quantity} × ${escape(PRODUCT.name)}, paid ${escape(money(order.totalMinor + paid.impactMinor, order.locale))}.</p>
${impact}
<section id="impact" aria-label="Your order's footprint"></section>
<p id="status" role="status"></p>
</main>`,
      [`${api}/js/v3/canopy.js`, '/static/confirmation.js'],
    )
  }

  async function route(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://shop.invalid')
    const path = url.pathname
    if (req.method === 'GET' && path === '/') return productPage(res, localeOf(url.searchParams.get('locale')))
    if (path === '/favicon.ico') {
      res.writeHead(204, { 'cache-control': 'max-age=86400' })
      return res.end()
    }
    if (req.method === 'GET' && STATIC[path]) {
      res.writeHead(200, { 'content-type': STATIC[path], 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
      return res.end(readFileSync(join(PUBLIC, path.slice('/static/'.length))))
    }
    if (req.method === 'POST' && path === '/checkout') {
      const form = new URLSearchParams(await readBody(req))
      const quantity = Math.min(20, Math.max(1, Math.trunc(Number(form.get('quantity'))) || 1))
      const draft = {
        id: `order-${randomBytes(6).toString('hex')}`,
        locale: localeOf(form.get('locale')),
        totalMinor: quantity * PRODUCT.unitMinor,
      }
      orders.set(draft.id, { ...draft, quantity, checkout: await createSession('checkout', draft) })
      res.writeHead(303, { location: `/checkout/${draft.id}` })
      return res.end()
    }
    const match = /^\/(checkout|orders|api\/orders)\/(order-[0-9a-f]{12})(\/pay|\/post-purchase)?$/.exec(path)
    const order = match ? orders.get(match[2] ?? '') : undefined
    if (!match || !order) return notFound(res)
    const [, area, , action] = match
    if (req.method === 'GET' && area === 'checkout' && !action) return checkoutPage(res, order)
    if (req.method === 'GET' && area === 'orders' && !action) return confirmationPage(res, order)
    if (req.method === 'POST' && area === 'api/orders' && action === '/pay') {
      if (order.paid) return json(res, 200, { redirect: `/orders/${order.id}` })
      const choice = JSON.parse(await readBody(req)) as Choice
      const impactMinor = await checkChoice(order.checkout.quoteId, choice, order.totalMinor)
      // The fake payment of totalMinor + impactMinor succeeds here; then the impact is allocated, keyed by the order.
      const fundsAllocationId = await allocate(order.checkout.quoteId, choice, order.id)
      const postPurchase = await createSession('post-purchase', order)
      order.paid = { impactMinor, choice, fundsAllocationId, postPurchase }
      return json(res, 200, { redirect: `/orders/${order.id}`, fundsAllocationId })
    }
    if (req.method === 'POST' && area === 'api/orders' && action === '/post-purchase' && order.paid) {
      const choice = JSON.parse(await readBody(req)) as Choice
      await checkChoice(order.paid.postPurchase.quoteId, choice, null)
      // A second (fake) payment, for what the consumer chose after the order.
      order.paid.postPurchaseAllocationId ??=
        (await allocate(order.paid.postPurchase.quoteId, choice, `${order.id}-post-purchase`)) ?? undefined
      return json(res, 200, { fundsAllocationId: order.paid.postPurchaseAllocationId })
    }
    return notFound(res)
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      console.error(`demo shop: ${req.method} ${req.url}:`, error)
      if (!res.headersSent) json(res, 400, { error: (error as Error).message })
      else res.end()
    })
  })
  const host = options.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, resolve)
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  return {
    url: options.publicOrigin ?? `http://localhost:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
