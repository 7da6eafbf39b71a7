// The pure domain's cost per request, without HTTP or a database: CPU microseconds per priced quote, per
// allocation split and per displayed rate set, measured with process.cpuUsage (CPU time of this process, so far
// less sensitive to other load on the machine than wall-clock time). Used to decide which memo caches of
// src/domain earn their keep. Run: npx tsx bench/domain.ts [rounds]
import { splitAllocation } from '../src/domain/allocation.js'
import { DEMO_CREDIT_PROJECTS, DEMO_IMPACT_PARTNERS } from '../src/domain/data/demo-catalogue.js'
import { DEFAULT_EMISSION_FACTORS } from '../src/domain/data/emission-factors.js'
import { indexFactors } from '../src/domain/footprint.js'
import { REFERENCE_FX_RATES } from '../src/domain/fx.js'
import { displayRatesOf, priceQuote, type QuoteInput, type ReferenceData } from '../src/domain/pricing.js'

const reference: ReferenceData = {
  factors: indexFactors(DEFAULT_EMISSION_FACTORS),
  fx: REFERENCE_FX_RATES,
  partners: DEMO_IMPACT_PARTNERS,
  projects: DEMO_CREDIT_PROJECTS,
}

const inputs: QuoteInput[] = [
  {
    currencyCode: 'GBP',
    amount: '47.97',
    consumer: { countryCode: 'GBR' },
    merchant: { countryCode: 'GBR' },
    mcc: '5992',
    locale: 'en-GB',
  },
  {
    currencyCode: 'USD',
    amount: '100.00',
    consumer: { countryCode: 'USA', state: 'CA' },
    merchant: { countryCode: 'USA' },
    mcc: '5812',
    locale: 'en-US',
  },
  {
    currencyCode: 'EUR',
    amount: '19.99',
    consumer: { countryCode: 'DEU' },
    merchant: { countryCode: 'DEU' },
    mcc: '5411',
    locale: 'de-DE',
  },
].map((partial) => ({ impactType: 'carbon', matchConsumerLocation: true, serviceFeeRate: '0.2', date: '2026-11-23', ...partial }))

function cpuMicros(iterations: number, run: (i: number) => void): number {
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) run(i)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / iterations
}

const rounds = Number(process.argv[2] ?? 5)
const iterations = 2_000
const quotes = inputs.map((input) => priceQuote(input, reference))
const results: Record<string, number[]> = { priceQuote: [], splitAllocation: [], displayRatesOf: [] }
for (let round = 0; round < rounds; round++) {
  results.priceQuote?.push(cpuMicros(iterations, (i) => priceQuote(inputs[i % inputs.length] as QuoteInput, reference)))
  results.splitAllocation?.push(
    cpuMicros(iterations, (i) => {
      const quote = quotes[i % quotes.length]
      if (quote) splitAllocation(quote, { credits: { amount: quote.credits?.amounts.total ?? '1' }, contribution: { amount: '1.00' } })
    }),
  )
  results.displayRatesOf?.push(
    cpuMicros(iterations, (i) => {
      const quote = quotes[i % quotes.length]
      if (quote?.credits) displayRatesOf(quote.credits.taxRates)
    }),
  )
}
for (const [name, samples] of Object.entries(results)) {
  const sorted = [...samples].sort((a, b) => a - b)
  console.log(
    `${name}: median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} µs CPU (min ${sorted[0]?.toFixed(1)}, max ${sorted[sorted.length - 1]?.toFixed(1)})`,
  )
}
