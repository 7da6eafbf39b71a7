// Draws the demo catalogue's partner images (src/domain/data/demo-catalogue.ts) as small PNG files in
// assets/demo/images/, which the API serves at /demo/images/. Simple geometric marks, made here: no third-party
// art. Deterministic, so running it again changes nothing. Usage: node scripts/make-demo-images.mjs
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateSync } from 'node:zlib'

const outdir = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets', 'demo', 'images')

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes) => {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const chunk = (type, data) => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'ascii')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/** An RGB PNG of width × height whose pixel colour is pixel(x, y) → [r, g, b]. */
function png(width, height, pixel) {
  const raw = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1)
    raw[row] = 0 // filter: none
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 3)
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8) // 8-bit, truecolour, deflate, no filter method, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))])
}

const hex = (value) => [1, 3, 5].map((i) => parseInt(value.slice(i, i + 2), 16))
const mix = (a, b, t) => a.map((v, i) => Math.round(v + (b[i] - v) * t))

// Marks on the unit square centred on 0 (x right, y down, -1..1): true where the mark is.
const MARKS = {
  leaf: (x, y) => (x - 0.35) ** 2 + (y + 0.35) ** 2 < 0.85 && (x + 0.35) ** 2 + (y - 0.35) ** 2 < 0.85,
  tree: (x, y) => (y > -0.7 && y < 0.45 && Math.abs(x) < (y + 0.7) * 0.6) || (Math.abs(x) < 0.1 && y >= 0.45 && y < 0.75),
  stone: (x, y) => Math.abs(x) + Math.abs(y) < 0.7 && !(Math.abs(x) + Math.abs(y) < 0.35),
  sun: (x, y) => x * x + y * y < 0.22 || (x * x + y * y > 0.36 && x * x + y * y < 0.5),
  wave: (x, y) => Math.abs(y - 0.18 * Math.sin(x * 5)) < 0.12 || Math.abs(y - 0.45 - 0.18 * Math.sin(x * 5)) < 0.12,
}

/** The mark in white on `colour`, 4×4 supersampled so that its edges are smooth; `size` is the mark's share. */
function mark(width, height, colour, name, size, background = () => colour) {
  const inside = MARKS[name]
  const scale = (Math.min(width, height) / 2) * size
  return png(width, height, (x, y) => {
    let hits = 0
    for (let i = 0; i < 4; i++)
      for (let j = 0; j < 4; j++) {
        if (inside((x + (i + 0.5) / 4 - width / 2) / scale, (y + (j + 0.5) / 4 - height / 2) / scale)) hits++
      }
    return mix(background(x, y), [255, 255, 255], hits / 16)
  })
}

const PARTNERS = [
  ['verdant-removals', '#1b7a43', 'leaf', ['logos', 'thumbnails', 'backgrounds']],
  ['forest-guardians', '#24543a', 'tree', ['logos', 'thumbnails', 'backgrounds']],
  ['durable-carbon', '#3d4650', 'stone', ['logos', 'thumbnails']],
  ['rewild-trust', '#a4521c', 'sun', ['logos', 'thumbnails']],
  ['ocean-commons', '#1f5f99', 'wave', ['logos']],
]

mkdirSync(outdir, { recursive: true })
for (const [slug, colour, name, groups] of PARTNERS) {
  const base = hex(colour)
  const light = mix(base, [255, 255, 255], 0.55)
  for (const group of groups) {
    let file
    if (group === 'logos') file = mark(256, 256, base, name, 0.8)
    else if (group === 'thumbnails') file = mark(400, 300, base, name, 0.6, (_x, y) => mix(light, base, y / 299))
    // Backgrounds: a plain gradient (every row one colour, so the file stays small).
    else file = png(1600, 900, (_x, y) => mix(light, base, y / 899))
    writeFileSync(join(outdir, `${slug}-${group}.png`), file)
  }
}
console.log(`demo images → ${outdir}`)
