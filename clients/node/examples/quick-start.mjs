// The README's quick start: run `npm start` at the repository root, then (in another terminal, at the root)
//   npm run build -w @canopy-climate/node && node clients/node/examples/quick-start.mjs
// CANOPY_BASE_URL and CANOPY_CREDENTIALS point it elsewhere.
import { readFileSync } from 'node:fs'
import { Canopy, CanopyApiError, toMinorUnits } from '@canopy-climate/node'

// npm start saves the demo organisation and its API key here on its first start.
const { organisationId, apiKey } = JSON.parse(readFileSync(process.env.CANOPY_CREDENTIALS ?? '.data/demo-credentials.json', 'utf8'))
const canopy = new Canopy({ apiKey, baseUrl: process.env.CANOPY_BASE_URL ?? 'http://127.0.0.1:3000' })

// 1. Price a purchase (amounts as exact decimal strings, or numbers).
const quote = await canopy.quotes.createCarbon({
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
const credits = quote.credits.amounts.total
console.log(`quote ${quote.quoteId}: credits ${credits} ${quote.currencyCode} (${toMinorUnits(credits, quote.currencyCode)} minor units)`)

// 2. After payment: allocate, keyed by your order so that a retry can never allocate twice.
const orderId = `order-${Date.now()}`
const allocation = await canopy.allocations.create(
  { organisationId, quoteId: quote.quoteId, credits: { amount: credits }, contribution: { amount: '1.00' } },
  { idempotencyKey: orderId },
)
console.log(`allocation ${allocation.fundsAllocationId} (request ${allocation.lastResponse.requestId})`)
const again = await canopy.allocations.create(
  { organisationId, quoteId: quote.quoteId, credits: { amount: credits }, contribution: { amount: '1.00' } },
  { idempotencyKey: orderId },
)
console.log(
  `the same order again: replayed=${again.lastResponse.replayed}, same allocation=${again.fundsAllocationId === allocation.fundsAllocationId}`,
)

// 3. Reconcile: every impact record of the last day, page after page.
let records = 0
let total = 0
for await (const record of canopy.impactRecords.list({
  dateTimeFrom: new Date(Date.now() - 86_400_000),
  dateTimeTo: new Date(Date.now() + 60_000),
  limit: 100,
})) {
  records++
  total += toMinorUnits(record.amounts.total, record.fundsCurrencyCode)
}
console.log(`${records} impact records in the last 24 hours, ${total} minor units in all`)

// 4. Errors are typed by the API's code.
await canopy.allocations.reverse(allocation.fundsAllocationId)
try {
  await canopy.allocations.reverse(allocation.fundsAllocationId)
} catch (error) {
  if (!CanopyApiError.is(error, 'ALREADY_REVERSED')) throw error
  console.log(`a second reversal: ${error.status} ${error.code} (${error.message})`)
}
