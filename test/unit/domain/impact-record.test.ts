import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { buildImpactRecord, impactRecordId, reversalImpactRecord, type ImpactRecordSource } from '../../../src/domain/impact-record.js'
import { Decimal, formatMinorUnits, minorUnitsOf } from '../../../src/domain/money.js'
import type { AllocationEntryAmounts, AllocationSplit } from '../../../src/domain/types.js'

const entry = (impact: string, impactTax: string, fee: string, feeTax: string, rates = ['0.2', '0.2']): AllocationEntryAmounts => ({
  impactAmount: impact,
  impactSalesTaxAmount: impactTax,
  impactSalesTaxRate: rates[0] ?? '0',
  serviceFeeAmount: fee,
  serviceFeeSalesTaxAmount: feeTax,
  serviceFeeSalesTaxRate: rates[1] ?? '0',
})

const organisation = {
  reference: 'MID12345',
  name: 'Blossom & Bloom',
  mcc: '5992',
  address: { line1: 'Ground floor', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
}

const sourceOf = (split: AllocationSplit, extra: Partial<ImpactRecordSource> = {}): ImpactRecordSource => ({
  allocation: {
    id: '018f0000-0000-7000-8000-000000000001',
    quoteId: '018f0000-0000-7000-8000-000000000002',
    organisationId: '018f0000-0000-7000-8000-000000000003',
    currencyCode: split.currencyCode,
    taxLiability: 'platform',
    split,
    createdAt: new Date('2024-01-15T14:30:00Z'),
  },
  collectionOrganisationId: '018f0000-0000-7000-8000-000000000004',
  consumerReference: 'consumer_123',
  fundsOrganisation: organisation,
  ...extra,
})

const gbpSplit: AllocationSplit = {
  currencyCode: 'GBP',
  credits: [
    { projectId: 'p-1', impactPartnerId: 'ip-1', quantityTonnes: '0.500000', ...entry('10.00', '0.00', '2.00', '0.40', ['0', '0.2']) },
  ],
  contributions: [{ impactPartnerId: 'ip-2', ...entry('1.21', '0.00', '0.24', '0.05', ['0', '0.2']) }],
}

describe('buildImpactRecord', () => {
  const cases: { name: string; split: AllocationSplit; total: string; impact: string; lines: number }[] = [
    { name: 'credits and a contribution (GBP)', split: gbpSplit, total: '13.90', impact: '11.21', lines: 2 },
    {
      name: 'JPY has no minor units',
      split: { currencyCode: 'JPY', credits: [], contributions: [{ impactPartnerId: 'ip', ...entry('100', '0', '20', '2') }] },
      total: '122',
      impact: '100',
      lines: 1,
    },
    {
      name: 'KWD has three',
      split: { currencyCode: 'KWD', credits: [], contributions: [{ impactPartnerId: 'ip', ...entry('1.001', '0.000', '0.200', '0.040') }] },
      total: '1.241',
      impact: '1.001',
      lines: 1,
    },
  ]
  it.each(cases)('$name', ({ split, total, impact, lines }) => {
    const record = buildImpactRecord(sourceOf(split))
    expect(record.amounts.total).toBe(total)
    expect(record.amounts.impact).toBe(impact)
    expect(record.credits.length + record.contributions.length).toBe(lines)
    expect(record.reversal).toBe(false)
    expect(record.reversalId).toBeUndefined()
    expect(record.fundsCurrencyCode).toBe(split.currencyCode)
  })

  it('carries the header fields of ekko’s example', () => {
    const record = buildImpactRecord(sourceOf(gbpSplit))
    expect(record).toMatchObject({
      fundsAllocationId: '018f0000-0000-7000-8000-000000000001',
      quoteId: '018f0000-0000-7000-8000-000000000002',
      fundsDateTime: '2024-01-15T14:30:00.000Z',
      consumerReference: 'consumer_123',
      fundsOrganisationId: '018f0000-0000-7000-8000-000000000003',
      fundsOrganisationReference: 'MID12345',
      collectionOrganisationId: '018f0000-0000-7000-8000-000000000004',
      taxLiability: 'platform',
      amounts: { total: '13.90', impact: '11.21', impactTax: '0.00', serviceFee: '2.24', serviceFeeTax: '0.45' },
      credits: [{ impactPartnerId: 'ip-1', projectId: 'p-1', amounts: { total: '12.40', impactTaxRate: '0', serviceFeeTaxRate: '0.2' } }],
      contributions: [{ impactPartnerId: 'ip-2', amounts: { total: '1.50' } }],
    })
    expect(impactRecordId(record)).toBe(record.fundsAllocationId)
  })

  it("uses the quote's merchant when it named one, else the organisation", () => {
    const own = buildImpactRecord(sourceOf(gbpSplit))
    expect(own.merchant).toEqual({
      name: 'Blossom & Bloom',
      mcc: '5992',
      address: { line1: 'Ground floor', line2: null, line3: null, city: 'London', state: null, postalCode: 'SW1A 1AA', countryCode: 'GBR' },
    })
    const named = buildImpactRecord(sourceOf(gbpSplit, { merchant: { name: 'Shop', mcc: '5411', address: { countryCode: 'DEU' } } }))
    expect(named.merchant).toMatchObject({ name: 'Shop', mcc: '5411', address: { countryCode: 'DEU', city: null } })
    const bare = buildImpactRecord(sourceOf(gbpSplit, { merchant: { name: 'Shop', mcc: '5411' } }))
    expect(bare.merchant.address).toBeNull()
  })
})

describe('reversalImpactRecord', () => {
  it('negates amounts at the reversal’s own time, rates unchanged, zero unsigned', () => {
    const record = buildImpactRecord(sourceOf(gbpSplit))
    const reversal = reversalImpactRecord(record, { id: 'rev-1', createdAt: new Date('2024-02-01T00:00:00Z') })
    expect(reversal).toMatchObject({
      fundsAllocationId: record.fundsAllocationId,
      reversalId: 'rev-1',
      reversal: true,
      fundsDateTime: '2024-02-01T00:00:00.000Z',
      amounts: { total: '-13.90', impact: '-11.21', impactTax: '0.00', serviceFee: '-2.24', serviceFeeTax: '-0.45' },
      credits: [{ quantityTonnes: '-0.500000', amounts: { impact: '-10.00', impactTaxRate: '0', serviceFeeTaxRate: '0.2' } }],
    })
    expect(impactRecordId(reversal)).toBe('rev-1')
    expect(JSON.stringify(reversal)).not.toMatch(/"-0(\.0+)?"/)
  })
})

// Random splits: each line's four components in minor units (some zero), any currency's precision.
const arbitrarySplit = fc
  .record({
    currencyCode: fc.constantFrom('GBP', 'JPY', 'KWD', 'USD', 'EUR'),
    credits: fc.array(fc.array(fc.bigInt({ min: 0n, max: 10_000_000n }), { minLength: 4, maxLength: 4 }), { maxLength: 3 }),
    contributions: fc.array(fc.array(fc.bigInt({ min: 0n, max: 10_000_000n }), { minLength: 4, maxLength: 4 }), { maxLength: 3 }),
  })
  .filter((s) => s.credits.length + s.contributions.length > 0)
  .map(({ currencyCode, credits, contributions }): AllocationSplit => {
    const digits = minorUnitsOf(currencyCode)
    const e = (parts: bigint[]) => {
      const [a = 0n, b = 0n, c = 0n, d = 0n] = parts.map((p) => p)
      return entry(formatMinorUnits(a, digits), formatMinorUnits(b, digits), formatMinorUnits(c, digits), formatMinorUnits(d, digits))
    }
    return {
      currencyCode,
      credits: credits.map((parts, i) => ({ projectId: `p-${i}`, impactPartnerId: `ip-${i}`, quantityTonnes: '1.000000', ...e(parts) })),
      contributions: contributions.map((parts, i) => ({ impactPartnerId: `ic-${i}`, ...e(parts) })),
    }
  })

const sumOf = (values: readonly string[]): string => values.reduce((acc, v) => acc.plus(v), new Decimal(0)).toString()

describe('impact record properties', () => {
  it('record amounts are the exact sums of its lines, and total = impact + taxes + fee', () => {
    fc.assert(
      fc.property(arbitrarySplit, (split) => {
        const record = buildImpactRecord(sourceOf(split))
        const lines = [...record.credits, ...record.contributions]
        for (const key of ['total', 'impact', 'impactTax', 'serviceFee', 'serviceFeeTax'] as const) {
          expect(new Decimal(record.amounts[key]).toString()).toBe(sumOf(lines.map((l) => l.amounts[key])))
        }
        const a = record.amounts
        expect(new Decimal(a.impact).plus(a.impactTax).plus(a.serviceFee).plus(a.serviceFeeTax).toString()).toBe(
          new Decimal(a.total).toString(),
        )
        const digits = minorUnitsOf(split.currencyCode)
        for (const value of [a.total, ...lines.map((l) => l.amounts.total)]) expect(value.split('.')[1]?.length ?? 0).toBe(digits)
      }),
    )
  })

  it('a reversal sums to minus the record, and reversing twice restores every amount', () => {
    fc.assert(
      fc.property(arbitrarySplit, (split) => {
        const record = buildImpactRecord(sourceOf(split))
        const once = reversalImpactRecord(record, { id: 'r1', createdAt: new Date(0) })
        expect(new Decimal(once.amounts.total).plus(record.amounts.total).isZero()).toBe(true)
        expect(JSON.stringify(once)).not.toMatch(/"-0(\.0+)?"/)
        const twice = reversalImpactRecord(once, { id: 'r2', createdAt: new Date(0) })
        expect(twice.amounts).toEqual(record.amounts)
        expect(twice.credits).toEqual(record.credits)
        expect(twice.contributions).toEqual(record.contributions)
      }),
    )
  })
})
