// A quote's explanation (src/domain/explain.ts) → wire: JSON as it is (exact decimal strings: an auditor's figures
// are never rounded on the way), or a plain-text rendering for people (Accept: text/plain).
import type { ExplainedSection, ExplainedTaxLine, QuoteExplanation } from '../../domain/explain.js'

const section = (title: string, s: ExplainedSection): string[] => [
  `${title}`,
  `  tax rates: impact ${s.taxRates.impactTax}, service fee ${s.taxRates.serviceFee} of impact, service fee tax ${s.taxRates.serviceFeeTax}`,
  `  D = 1 + ${s.taxRates.impactTax} + ${s.taxRates.serviceFee} × (1 + ${s.taxRates.serviceFeeTax}) = ${s.grossFactor}`,
  `  split weights [impact, impact tax, service fee, service fee tax] = [${s.splitWeights.join(', ')}]`,
  `  effective rates (weights ÷ D, 10 decimals): impact ${s.effectiveRates.impact}, impact tax ${s.effectiveRates.impactTax}, ` +
    `service fee ${s.effectiveRates.serviceFee}, service fee tax ${s.effectiveRates.serviceFeeTax}`,
]

const taxLine = (label: string, line: ExplainedTaxLine): string => `  ${label}: ${line.rate}${line.rule === null ? '' : ` — ${line.rule}`}`

/** The explanation as readable plain text, every figure as the JSON has it. */
export function explanationText(e: QuoteExplanation): string {
  const f = e.footprint
  const lines: string[] = [
    `Quote ${e.quoteId} (${e.impactType}, ${e.currencyCode}, ${e.minorUnits} decimals), priced ${e.createdAt}`,
    '',
    `Transaction: ${e.transaction.amount} ${e.transaction.currencyCode}, MCC ${f.mcc}, merchant country ${f.merchantCountryCode ?? 'not locked'}`,
    '',
    'Footprint',
    `  factor ${f.factor.id}: ${f.factor.value}${f.factor.tailpipeValue === null ? '' : ` + ${f.factor.tailpipeValue} at the tailpipe`} ${f.factor.unit}`,
    `    source ${f.factor.source}, version ${f.factor.version}, region ${f.factor.region}, matched by ${f.factor.matchedBy}`,
    `  FX: 1 ${f.fx.from} = ${f.fx.rate} ${f.fx.to} (${f.fx.source}, ${f.fx.date})`,
    `  deflator: ${f.deflator.value} — ${f.deflator.rule}` +
      (f.deflator.basis === null
        ? ''
        : ` (${f.deflator.basis.series}: ${f.deflator.basis.priceYear} ${f.deflator.basis.priceYearIndex} ÷ ${f.deflator.basis.year} ${f.deflator.basis.yearIndex})`),
    `  spend = ${e.transaction.amount} × ${f.fx.rate} × ${f.deflator.value} = ${f.spend} ${f.factor.baseCurrency}`,
    ...(f.result.kind === 'carbon'
      ? [`  CO2e = spend × factor × 1000 = ${f.result.gramsExact} g → ${f.result.co2eGrams} g; ${f.result.co2eOunces} oz`]
      : [`  area = spend × factor = ${f.result.squareMetresExact} m² → ${f.result.areaSquareMetres} m²; ${f.result.areaSquareFeet} ft²`]),
    ...f.equivalents.map((q) => `  ${q.key}: ${q.value} (${q.basis})`),
    '',
    `Tax: rule set ${e.tax.ruleSetVersion}, effective ${e.tax.effectiveDate}${e.tax.rateSource === null ? '' : `; rates from ${e.tax.rateSource}`}`,
    `  jurisdiction ${e.tax.jurisdiction.country}${e.tax.jurisdiction.state === null ? '' : `-${e.tax.jurisdiction.state}`} (the ${e.tax.jurisdiction.basis}'s), on ${e.quoteDate}`,
    taxLine('carbon credits', e.tax.creditImpact),
    taxLine('contributions', e.tax.contributionImpact),
    taxLine('service fee', e.tax.serviceFee),
  ]
  const c = e.credits
  if (c !== null) {
    lines.push('', 'Credits')
    for (const p of c.projects) {
      lines.push(
        `  ${p.name} (${p.id}): ${p.catalogue.price} ${p.catalogue.currencyCode}` +
          (p.fx === null ? '' : ` × ${p.fx.rate} (${p.fx.source}, ${p.fx.date})`) +
          ` → ${p.unitPrice} ${e.currencyCode}; weight ${p.weight} (${p.weightShare})`,
      )
    }
    lines.push(
      `  unit price = Σ weight × price ÷ Σ weight = ${c.unitPriceExact ?? '(rates not locked)'} → ${c.unitPrice} ${e.currencyCode} per tCO2e`,
      `  tonnes = ${f.result.kind === 'carbon' ? f.result.co2eGrams : '0'} g ÷ 1,000,000 = ${c.tonnes} t`,
      ...section('', c.section).slice(1),
      `  total = ${c.tonnes} × ${c.unitPrice} × ${c.section.grossFactor} = ${c.totalExact} → ${c.amounts.total} ${e.currencyCode}`,
      `  amounts: impact ${c.amounts.impact}, impact tax ${c.amounts.impactTax}, service fee ${c.amounts.serviceFee}, ` +
        `service fee tax ${c.amounts.serviceFeeTax} (sum ${c.amounts.total})`,
    )
  }
  lines.push('', ...section('Contribution', e.contribution), `  partners: ${e.contribution.impactPartnerIds.join(', ') || 'none'}`)
  lines.push('', 'Rounding', ...e.rounding.map((r) => `  ${r.figure}: ${r.rule}`))
  if (e.missing.length > 0) lines.push('', 'Not locked by this quote', ...e.missing.map((m) => `  ${m}`))
  return `${lines.join('\n')}\n`
}
