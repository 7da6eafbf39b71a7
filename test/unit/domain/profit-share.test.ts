import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Decimal, formatMinorUnits, minorUnitsOf, toMinorUnits } from '../../../src/domain/money.js'
import { REFERENCE_FX_RATES } from '../../../src/domain/fx.js'
import {
  beneficiaryJurisdiction,
  buildProfitShareRecord,
  keptProfitShares,
  parseRelativeProfitShare,
  proportionalProfitShares,
  reverseProfitShare,
  serviceFeeOf,
  splitFeeByShares,
  splitProfitShare,
  type ProfitShareBeneficiary,
  type ProfitShareInput,
} from '../../../src/domain/profit-share.js'
import { buildImpactRecord } from '../../../src/domain/impact-record.js'
import { splitProfitShareBefore } from './split-profit-share-before.js'

const GB = beneficiaryJurisdiction('GBR', null)
const beneficiary = (relativeProfitShare: string, billingCurrencyCode = 'GBP', taxJurisdiction = GB): ProfitShareBeneficiary => ({
  relativeProfitShare,
  billingCurrencyCode,
  taxJurisdiction,
})
const input = (overrides: Partial<ProfitShareInput>): ProfitShareInput => ({
  fee: '2.00',
  fundsCurrencyCode: 'GBP',
  chain: [beneficiary('0.2'), beneficiary('0.6')],
  settlementModel: 'gross',
  date: '2026-11-21',
  fx: REFERENCE_FX_RATES,
  ...overrides,
})

describe('relative and proportional shares', () => {
  it.each([
    ['0', '0'],
    ['1', '1'],
    ['0.60', '0.6'],
    ['0.123456', '0.123456'],
    [0.2, '0.2'],
  ])('%j is a valid relative share, %s', (value, expected) => {
    expect(parseRelativeProfitShare(value)).toBe(expected)
  })

  it.each([['-0.1'], ['1.000001'], ['2'], ['0.1234567'], ['abc'], [Number.NaN], [1e-7]])('%j → INVALID_PROFIT_SHARE', (value) => {
    expect(() => parseRelativeProfitShare(value, '/relativeProfitShare')).toThrow(
      expect.objectContaining({ code: 'INVALID_PROFIT_SHARE', path: '/relativeProfitShare' }),
    )
  })

  it("a share on a share is the product: 0.6 of a parent's 0.2 is 0.12 (docs/pricing.md)", () => {
    expect(proportionalProfitShares(['0.2', '0.6'])).toEqual(['0.2', '0.12'])
    expect(proportionalProfitShares(['0.5', '0.5', '0.5'])).toEqual(['0.5', '0.25', '0.125'])
    expect(proportionalProfitShares(['0', '0.6'])).toEqual(['0', '0'])
    expect(proportionalProfitShares(['0.123456', '0.654321'])).toEqual(['0.123456', '0.080779853376'])
  })

  it('the merchant keeps 12% of the fee, the root 8%, the platform 80%', () => {
    const { kept, denominator } = keptProfitShares(['0.2', '0.6'])
    expect(kept.map((k) => new Decimal(k.toString()).div(denominator.toString()).toString())).toEqual(['0.08', '0.12'])
    const split = splitFeeByShares(10_000n, kept, denominator)
    expect(split).toEqual({ platform: 8000n, beneficiaries: [800n, 1200n] })
  })
})

describe('splitFeeByShares', () => {
  it.each([
    // fee, shares over 100, platform, beneficiaries (minor units)
    [5, [8, 12], 4, [0, 1]],
    [1, [50, 50], 0, [1, 0]],
    [3, [50, 50], 0, [2, 1]],
    [7, [100], 0, [7]],
    [7, [0, 0], 7, [0, 0]],
    [-5, [8, 12], -4, [0, -1]],
  ])('fee %i by %j/100: platform %i, beneficiaries %j', (fee, shares, platform, beneficiaries) => {
    expect(splitFeeByShares(BigInt(fee), shares.map(BigInt), 100n)).toEqual({
      platform: BigInt(platform),
      beneficiaries: beneficiaries.map(BigInt),
    })
  })

  it.each([
    ['shares summing past the whole', [60, 60]],
    ['a negative share', [-1, 50]],
  ])('%s → PROFIT_SHARE_EXCEEDS_FEE', (_label, shares) => {
    expect(() => splitFeeByShares(100n, shares.map(BigInt), 100n)).toThrow(expect.objectContaining({ code: 'PROFIT_SHARE_EXCEEDS_FEE' }))
  })
})

describe('splitProfitShare: the three-level tree, platform → PSP 0.2 → merchant 0.6', () => {
  it('GBP: a fee of 2.00 → PSP 0.16 (tax 0.03), merchant 0.24 (tax 0.05), platform 1.60', () => {
    expect(splitProfitShare(input({}))).toEqual({
      settlementModel: 'gross',
      platformProfitShare: '1.60',
      lines: [
        {
          level: 0,
          fundsProfitShare: '0.16',
          billingCurrencyCode: 'GBP',
          billingCurrencyExchangeRate: '1',
          profitShare: '0.16',
          profitShareTax: '0.03',
          profitShareTaxRate: '0.2',
        },
        {
          level: 1,
          fundsProfitShare: '0.24',
          billingCurrencyCode: 'GBP',
          billingCurrencyExchangeRate: '1',
          profitShare: '0.24',
          profitShareTax: '0.05',
          profitShareTaxRate: '0.2',
        },
      ],
    })
  })

  it('USD billing: the locked GBP→USD rate to 10 significant digits, share and tax each rounded once', () => {
    // 1.1794 / 0.86790 = 1.3589123170872…; 0.24 × 1.358912317 = 0.3261389… → 0.33; × 0.2 = 0.0652277… → 0.07.
    const split = splitProfitShare(input({ chain: [beneficiary('0.2'), beneficiary('0.6', 'USD')] }))
    expect(split?.lines[1]).toEqual({
      level: 1,
      fundsProfitShare: '0.24',
      billingCurrencyCode: 'USD',
      billingCurrencyExchangeRate: '1.358912317',
      profitShare: '0.33',
      profitShareTax: '0.07',
      profitShareTaxRate: '0.2',
    })
    expect(split?.platformProfitShare).toBe('1.60')
  })

  it('JPY: a fee of ¥200 → PSP ¥16 (tax ¥2 at 10%), merchant ¥24 (tax ¥2), platform ¥160', () => {
    const JP = beneficiaryJurisdiction('JPN', null)
    const split = splitProfitShare(
      input({ fee: '200', fundsCurrencyCode: 'JPY', chain: [beneficiary('0.2', 'JPY', JP), beneficiary('0.6', 'JPY', JP)] }),
    )
    expect(split?.platformProfitShare).toBe('160')
    expect(split?.lines.map((l) => [l.fundsProfitShare, l.profitShare, l.profitShareTax, l.profitShareTaxRate])).toEqual([
      ['16', '16', '2', '0.1'],
      ['24', '24', '2', '0.1'],
    ])
  })

  it('no line for an organisation that keeps nothing; null when nobody keeps anything', () => {
    expect(splitProfitShare(input({ chain: [beneficiary('0.2'), beneficiary('1')] }))?.lines.map((l) => l.level)).toEqual([1])
    expect(splitProfitShare(input({ chain: [beneficiary('0'), beneficiary('0.6')] }))).toBeNull()
    expect(splitProfitShare(input({ chain: [beneficiary('0')] }))).toBeNull()
  })

  it('a share whose amount rounds to nothing still has its line (the record shows who shares)', () => {
    const split = splitProfitShare(input({ fee: '0.05' }))
    expect(split?.lines.map((l) => l.fundsProfitShare)).toEqual(['0.00', '0.01'])
    expect(split?.platformProfitShare).toBe('0.04')
  })

  it('a billing currency the rates cannot price falls back to the funds currency (never refuses an allocation)', () => {
    const split = splitProfitShare(input({ chain: [beneficiary('0.2', 'XAU')] }))
    expect(split?.lines[0]?.billingCurrencyCode).toBe('GBP')
    expect(split?.lines[0]?.billingCurrencyExchangeRate).toBe('1')
  })

  it('a reversal negates every amount exactly; rates and currencies stay', () => {
    const split = splitProfitShare(input({ chain: [beneficiary('0.2'), beneficiary('0.6', 'USD')] }))
    if (split === null) throw new Error('expected a split')
    const reversed = reverseProfitShare(split)
    expect(reversed.platformProfitShare).toBe('-1.60')
    expect(reversed.lines.map((l) => [l.fundsProfitShare, l.profitShare, l.profitShareTax, l.billingCurrencyExchangeRate])).toEqual([
      ['-0.16', '-0.16', '-0.03', '1'],
      ['-0.24', '-0.33', '-0.07', '1.358912317'],
    ])
    expect(reverseProfitShare(splitProfitShare(input({ fee: '0.05' })) as NonNullable<typeof split>).lines[0]?.fundsProfitShare).toBe(
      '0.00',
    )
  })
})

describe('splitProfitShare properties', () => {
  const currency = fc.constantFrom('JPY', 'GBP', 'KWD', 'USD', 'BHD')
  const share = fc.integer({ min: 0, max: 1_000_000 }).map((n) => new Decimal(n).div(1_000_000).toString())
  const chain = fc.array(fc.record({ share, billing: fc.constantFrom('GBP', 'JPY', 'KWD', 'USD', 'EUR') }), {
    minLength: 1,
    maxLength: 6,
  })

  it('beneficiaries + platform = the fee exactly, each within one minor unit of its exact share, for any shares and precision', () => {
    fc.assert(
      fc.property(currency, fc.bigInt({ min: 0n, max: 10n ** 12n }), chain, (code, minor, links) => {
        const digits = minorUnitsOf(code)
        const fee = formatMinorUnits(minor, digits)
        const split = splitProfitShare(input({ fee, fundsCurrencyCode: code, chain: links.map((l) => beneficiary(l.share, l.billing)) }))
        const { kept, denominator } = keptProfitShares(links.map((l) => l.share))
        if (kept.every((k) => k === 0n)) return split === null
        if (split === null) return false
        const toMinor = (a: string) => toMinorUnits(new Decimal(a), digits)
        const beneficiaries = split.lines.reduce((sum, l) => sum + toMinor(l.fundsProfitShare), 0n)
        expect(beneficiaries + toMinor(split.platformProfitShare)).toBe(minor)
        for (const line of split.lines) {
          const exact = new Decimal(minor.toString()).times((kept[line.level] ?? 0n).toString()).div(denominator.toString())
          expect(exact.minus(toMinor(line.fundsProfitShare).toString()).abs().lessThan(1)).toBe(true)
          // Amounts are at their currency's precision, and same-currency lines bill exactly the funds share.
          expect(new Decimal(line.profitShare).decimalPlaces()).toBeLessThanOrEqual(minorUnitsOf(line.billingCurrencyCode))
          if (line.billingCurrencyCode === code) expect(line.profitShare).toBe(line.fundsProfitShare)
        }
        const reversed = reverseProfitShare(split)
        const back = reversed.lines.reduce((sum, l) => sum + toMinor(l.fundsProfitShare), 0n) + toMinor(reversed.platformProfitShare)
        expect(back).toBe(-minor)
        return true
      }),
      { numRuns: 300 },
    )
  })
})

describe('a profit-share record', () => {
  const split = splitProfitShare(input({}))
  const contribution = {
    impactPartnerId: 'p1',
    impactAmount: '10.00',
    impactSalesTaxAmount: '0.00',
    impactSalesTaxRate: '0',
    serviceFeeAmount: '1.50',
    serviceFeeSalesTaxAmount: '0.30',
    serviceFeeSalesTaxRate: '0.2',
  }
  const allocationSplit = { currencyCode: 'GBP', credits: [], contributions: [contribution, { ...contribution, serviceFeeAmount: '0.50' }] }
  const impact = buildImpactRecord({
    allocation: {
      id: 'a1',
      quoteId: 'q1',
      organisationId: 'merchant',
      currencyCode: 'GBP',
      taxLiability: 'platform',
      split: allocationSplit,
      createdAt: new Date('2026-11-21T10:00:00Z'),
    },
    collectionOrganisationId: 'psp',
    consumerReference: 'c1',
    merchant: null,
    fundsOrganisation: { reference: 'MID-1', name: 'Merchant', mcc: '5992', address: null },
  })
  const chain = [
    { id: 'psp', reference: 'PSP_001' },
    { id: 'merchant', reference: 'MID-1' },
  ]

  it('the fee it splits is the service fee of every line (credits and contribution), before its tax', () => {
    expect(serviceFeeOf(allocationSplit)).toBe('2.00')
  })

  it("the root sees every line and the platform's part; a beneficiary below it only its own and deeper", () => {
    if (split === null) throw new Error('expected a split')
    const root = buildProfitShareRecord(impact, split, chain, 0)
    expect(root).toMatchObject({ billingOrganisationId: 'psp', merchant: { name: 'Merchant', mcc: '5992' }, platformProfitShare: '1.60' })
    expect(root.profitShareAllocations.map((a) => [a.beneficiaryOrganisationId, a.beneficiaryOrganisationReference])).toEqual([
      ['psp', 'PSP_001'],
      ['merchant', 'MID-1'],
    ])
    const merchant = buildProfitShareRecord(impact, split, chain, 1)
    expect(merchant.platformProfitShare).toBeNull()
    expect(merchant.profitShareAllocations.map((a) => a.beneficiaryOrganisationId)).toEqual(['merchant'])
  })
})

describe('splitProfitShare: the same bytes as before its memos and integer products (split-profit-share-before.ts)', () => {
  const jurisdiction = fc.constantFrom(
    GB,
    beneficiaryJurisdiction('USA', 'CA'),
    beneficiaryJurisdiction('USA', null),
    beneficiaryJurisdiction('CAN', 'QC'),
    beneficiaryJurisdiction('DEU', null),
    beneficiaryJurisdiction('JPN', null),
  )
  const share = fc.oneof(
    fc.constantFrom('0', '1', '0.2', '0.6', '0.333333', '0.999999'),
    fc.integer({ min: 0, max: 1_000_000 }).map((n) => new Decimal(n).div(1_000_000).toString()),
  )
  const link = fc.record({ share, billing: fc.constantFrom('GBP', 'JPY', 'KWD', 'USD', 'EUR', 'CAD', 'XAU'), jurisdiction })
  const date = fc.constantFrom('2019-06-30', '2024-08-01', '2026-11-21', '2027-01-01')

  it('for any fee, currency, chain, billing currency, jurisdiction and date, also when the memos are reused', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('JPY', 'GBP', 'KWD', 'USD', 'EUR', 'BHD'),
        fc.bigInt({ min: 0n, max: 10n ** 13n }),
        fc.array(link, { minLength: 1, maxLength: 5 }),
        fc.array(date, { minLength: 1, maxLength: 3 }),
        (code, minor, links, dates) => {
          const chain = links.map((l) => beneficiary(l.share, l.billing, l.jurisdiction))
          const fee = formatMinorUnits(minor, minorUnitsOf(code))
          // The same chain and table objects on several dates and fees: what the reference cache gives a process.
          for (const [i, on] of dates.entries()) {
            const at = input({
              fee: i === 0 ? fee : formatMinorUnits(minor / BigInt(i + 1), minorUnitsOf(code)),
              fundsCurrencyCode: code,
              chain,
              date: on,
            })
            expect(splitProfitShare(at)).toEqual(splitProfitShareBefore(at))
          }
        },
      ),
      { numRuns: 400 },
    )
  })

  it('a product past the service Decimal precision is rounded as before (Decimal, not integers)', () => {
    const huge = input({ fee: '9'.repeat(40) + '.99', chain: [beneficiary('0.999999', 'KWD', beneficiaryJurisdiction('USA', 'CA'))] })
    expect(splitProfitShare(huge)).toEqual(splitProfitShareBefore(huge))
  })
})
