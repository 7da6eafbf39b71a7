// Statement texts as pg_stat_activity shows them, reduced to a shape: placeholders become `$`, and each
// list of parameter tuples (a coalesced multi-row INSERT, a batched key lookup) becomes `(…)`, so one
// statement with any batch size has one shape; the number of tuples seen is kept as `rows`.

export interface StatementShape {
  /** Grouping key: the normalised text, at most KEY_LENGTH characters. */
  key: string
  /** Short human-readable form. */
  label: string
  /** Tuples in the longest parameter list (a lower bound when `truncated`). */
  rows: number | undefined
  /** Postgres cut the text at track_activity_query_size. */
  truncated: boolean
}

const KEY_LENGTH = 160
const PARAM = String.raw`\$(?:::\w+)?`
const TUPLE = String.raw`\(\s*${PARAM}(?:\s*,\s*${PARAM})*\s*\)`
const TUPLE_LIST = new RegExp(`${TUPLE}(?:\\s*,\\s*${TUPLE})*`, 'g')
const IDENT = String.raw`"?\w+"?(?:\."?\w+"?)?`
const COLUMN_LIST = new RegExp(`\\((?:${IDENT}\\s*,\\s*){2,}${IDENT}\\)`, 'g')

export function statementShape(text: string, trackActivityQuerySize: number): StatementShape {
  const truncated = Buffer.byteLength(text) >= trackActivityQuerySize - 1
  let rows: number | undefined
  let normalised = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\$\d+/g, '$')
    .replace(TUPLE_LIST, (list) => {
      const count = (list.match(/\)\s*,\s*\(/g)?.length ?? 0) + 1
      rows = Math.max(rows ?? 0, count)
      return '(…)'
    })
  // A cut text ends inside a tuple: drop the partial tuple.
  if (truncated) normalised = normalised.replace(/,?\s*\([^)]*$/, '')
  const label = `${normalised}${truncated ? ' …' : ''}`
    .replace(/^select .*? from /i, (head) => (head.length > 40 ? 'select … from ' : head))
    .replace(COLUMN_LIST, (list) => `(${list.split(',').length} columns)`)
  return {
    key: normalised.slice(0, KEY_LENGTH),
    label: label.length > 110 ? `${label.slice(0, 109)}…` : label,
    rows,
    truncated,
  }
}
