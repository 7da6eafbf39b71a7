// Embedded reference FX rates (units of currency per 1 EUR): the default until an operator imports newer ECB
// rates (`fx import`, stored in fx_rates); see data/SOURCES.md.
import type { FxTable } from '../types.js'
import { Decimal } from '../money.js'

/** ECB euro foreign exchange reference rates of 2026-02-06 (data/SOURCES.md §3). */
const ECB_RATES_2026_02_06: Readonly<Record<string, string>> = {
  USD: '1.1794',
  JPY: '185.27',
  GBP: '0.86790',
  CHF: '0.9175',
  SEK: '10.6735',
  NOK: '11.4695',
  DKK: '7.4672',
  CAD: '1.6118',
  AUD: '1.6880',
  NZD: '1.9673',
}

/**
 * Currencies the ECB does not publish, priced through USD: units of currency per 1 USD.
 * BHD, SAR and AED are official central-bank pegs. KWD is pegged to an undisclosed basket, so its
 * figure is an indicative market level (≈ 0.307 KWD per USD in 2025), not an official rate: it is
 * here so that 3-decimal currencies can be quoted, and operators should replace it.
 */
export const USD_PEGGED_RATES: Readonly<Record<string, { readonly perUsd: string; readonly kind: 'official peg' | 'indicative' }>> = {
  BHD: { perUsd: '0.376', kind: 'official peg' },
  SAR: { perUsd: '3.75', kind: 'official peg' },
  AED: { perUsd: '3.6725', kind: 'official peg' },
  KWD: { perUsd: '0.307', kind: 'indicative' },
}

function withUsdPegs(ecb: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const usdPerEur = new Decimal(ecb.USD ?? '0')
  const rates: Record<string, string> = { ...ecb }
  for (const [code, { perUsd }] of Object.entries(USD_PEGGED_RATES)) {
    rates[code] = usdPerEur.times(perUsd).toString()
  }
  return Object.freeze(rates)
}

const PEGS_NOTE = 'BHD, SAR, AED via USD pegs, KWD indicative'

/**
 * A reference-rate table (base EUR) from ECB rates of one date: the ECB figures as published, plus BHD/SAR/AED
 * (official USD pegs) and KWD (indicative) crossed through the ECB USD rate — when the ECB published one that
 * day (otherwise those four are not priced). Pegged currencies the ECB itself publishes keep the ECB figure.
 */
export function fxTableFromEcbRates(date: string, ecbRates: Readonly<Record<string, string>>, description: string): FxTable {
  const pegged = ecbRates.USD === undefined ? Object.freeze({ ...ecbRates }) : Object.freeze({ ...withUsdPegs(ecbRates), ...ecbRates })
  return Object.freeze({
    base: 'EUR',
    date,
    source: ecbRates.USD === undefined ? description : `${description}; ${PEGS_NOTE}`,
    rates: pegged,
  })
}

/**
 * The default reference-rate table, base EUR, dated 2026-02-06. ECB figures as published, plus
 * BHD/SAR/AED (official USD pegs) and KWD (indicative) crossed through the ECB USD rate. Used until an operator
 * imports newer rates (`fx import`), and whenever none are stored.
 */
export const REFERENCE_FX_RATES: FxTable = fxTableFromEcbRates(
  '2026-02-06',
  ECB_RATES_2026_02_06,
  'ECB euro foreign exchange reference rates 2026-02-06',
)
