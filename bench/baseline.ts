// The least any implementation must do: a bare Fastify route that parses the JSON body and INSERTs it as
// one jsonb row, on a database of its own. Same pool size as the API. Started by bench/run.ts; what it
// stands for is in docs/benchmarks.md.
import Fastify from 'fastify'
import pg from 'pg'

const url = process.env.BASELINE_DATABASE_URL
const port = Number(process.env.PORT)
if (!url || !port) throw new Error('BASELINE_DATABASE_URL and PORT are required')

const pool = new pg.Pool({
  connectionString: url,
  max: Number(process.env.DATABASE_POOL_MAX ?? 10),
  application_name: 'canopy-bench-baseline',
})
// On a connection of its own, closed at once: its statistics are published when it ends, so the harness
// can read settled counters without waiting (bench/harness/database.ts).
const setup = new pg.Client({ connectionString: url, application_name: 'canopy-bench-baseline' })
await setup.connect()
await setup.query(`CREATE TABLE IF NOT EXISTS bench_baseline (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(), body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`)
await setup.end()

const app = Fastify({ logger: false })
app.post(
  '/baseline',
  {
    schema: {
      body: { type: 'object' },
      response: { 201: { type: 'object', properties: { id: { type: 'string' } } } },
    },
  },
  async (request, reply) => {
    const { rows } = await pool.query<{ id: string }>('INSERT INTO bench_baseline (body) VALUES ($1) RETURNING id', [request.body])
    reply.code(201)
    return { id: rows[0]?.id }
  },
)
await app.listen({ port, host: '127.0.0.1' })
console.log(`baseline listening on ${port}`)
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => pool.end())
    .then(() => process.exit(0))
})
