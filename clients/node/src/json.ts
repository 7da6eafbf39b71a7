// Request bodies as JSON text, with exact amounts: where the API reads a JSON number (src/generated/contract.ts,
// REQUEST_NUMBER_FIELDS), a decimal string is written as that number's digits, never through a float.

const DECIMAL = /^-?\d+(\.\d+)?$/

/** "047.50" → "47.50": a JSON number has no leading zeros (its decimals are kept as given). */
const asJsonNumber = (text: string): string => text.replace(/^(-?)0+(?=\d)/, '$1')

const describe = (path: string[]) => path.join('.').replaceAll('.[]', '[]')

/**
 * JSON text of `body`. At each of `numberFields` (paths of property names, "[]" for array items) a string must be a
 * plain decimal ("47.97", "-1", "0.5") and is written unquoted; a number must be finite.
 */
export function serializeBody(body: unknown, numberFields: readonly (readonly string[])[] = []): string {
  const numeric = new Set(numberFields.map((path) => path.join('.')))
  const write = (value: unknown, path: string[]): string | undefined => {
    const isNumberField = numeric.has(path.join('.'))
    if (isNumberField && typeof value === 'string') {
      if (!DECIMAL.test(value))
        throw new TypeError(`${describe(path)} must be a decimal number such as "47.97", not ${JSON.stringify(value)}`)
      return asJsonNumber(value)
    }
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`${describe(path)} must be a finite number, not ${value}`)
    if (
      value === null ||
      typeof value !== 'object' ||
      value instanceof Date ||
      typeof (value as { toJSON?: unknown }).toJSON === 'function'
    ) {
      return JSON.stringify(value)
    }
    if (Array.isArray(value)) return `[${value.map((item) => write(item, [...path, '[]']) ?? 'null').join(',')}]`
    const members: string[] = []
    for (const [key, member] of Object.entries(value)) {
      const text = write(member, [...path, key])
      if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`)
    }
    return `{${members.join(',')}}`
  }
  return write(body, []) ?? 'null'
}

/** A query string: undefined and null are left out, dates are ISO 8601, arrays repeat the name. */
export function serializeQuery(query: Record<string, unknown> | undefined): string {
  if (!query) return ''
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue
      params.append(name, item instanceof Date ? item.toISOString() : String(item))
    }
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}
