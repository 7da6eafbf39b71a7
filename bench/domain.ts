// The pure domain's cost per request, without HTTP or a database: CPU microseconds per priced quote, per
// allocation split, per profit-share split and per displayed rate set, measured with process.cpuUsage (CPU time of this process, so far
// less sensitive to other load on the machine than wall-clock time). Used to decide which memo caches of
// src/domain earn their keep. Run: npx tsx bench/domain.ts [rounds]
import { splitAllocation } from '../src/domain/allocation.js'
import { DEMO_CREDIT_PROJECTS, DEMO_IMPACT_PARTNERS } from '../src/domain/data/demo-catalogue.js'
import { DEFAULT_EMISSION_FACTORS } from '../src/domain/data/emission-factors.js'
import { indexFactors } from '../src/domain/footprint.js'
import { REFERENCE_FX_RATES } from '../src/domain/fx.js'
import { displayRatesOf, priceQuote, type QuoteInput, type ReferenceData } from '../src/domain/pricing.js'
import { beneficiaryJurisdiction, splitProfitShare, type ProfitShareInput } from '../src/domain/profit-share.js'

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
const results: Record<string, number[]> = { priceQuote: [], splitAllocation: [], splitProfitShare: [], displayRatesOf: [] }
// The bench's profit-share trees (bench/scenarios.ts): a PSP keeping 0.2 and its merchant 0.6, billed in GBP, or the
// merchant in USD. One chain object each, as the reference cache gives a process.
const gb = beneficiaryJurisdiction('GBR', null)
const chains = [
  [
    { relativeProfitShare: '0.2', billingCurrencyCode: 'GBP', taxJurisdiction: gb },
    { relativeProfitShare: '0.6', billingCurrencyCode: 'GBP', taxJurisdiction: gb },
  ],
  [
    { relativeProfitShare: '0.2', billingCurrencyCode: 'GBP', taxJurisdiction: gb },
    { relativeProfitShare: '0.6', billingCurrencyCode: 'USD', taxJurisdiction: beneficiaryJurisdiction('USA', 'NY') },
  ],
]
const profitShareInputs: ProfitShareInput[] = ['0.96', '1.37', '12.08'].flatMap((fee) =>
  chains.map((chain) => ({ fee, fundsCurrencyCode: 'GBP', chain, settlementModel: 'gross', date: '2026-11-23', fx: REFERENCE_FX_RATES })),
)
for (let round = 0; round < rounds; round++) {
  results.priceQuote?.push(cpuMicros(iterations, (i) => priceQuote(inputs[i % inputs.length] as QuoteInput, reference)))
  results.splitAllocation?.push(
    cpuMicros(iterations, (i) => {
      const quote = quotes[i % quotes.length]
      if (quote) splitAllocation(quote, { credits: { amount: quote.credits?.amounts.total ?? '1' }, contribution: { amount: '1.00' } })
    }),
  )
  results.splitProfitShare?.push(
    cpuMicros(iterations, (i) => splitProfitShare(profitShareInputs[i % profitShareInputs.length] as ProfitShareInput)),
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
