// No Docker engine runs here, so the Dockerfile, docker-compose.yml and .env.example are checked by reading them.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { CONFIG_KEYS, ConfigSchema } from '../../src/config.js'
import { repoRoot } from '../helpers/process.js'
import { serverNodeFlags } from '../../scripts/server-command.js'

const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8')
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const compose: any = parse(read('docker-compose.yml'), { merge: true })
const dockerfile = read('Dockerfile')
const pkg = JSON.parse(read('package.json'))

const envExample = new Map(
  read('.env.example')
    .split('\n')
    .filter((line) => /^[A-Z0-9_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
)

/** dist path of a compiled source file, following tsconfig.build.json (rootDir "."). */
const sourceOf = (distPath: string) => distPath.replace(/^dist\//, '').replace(/\.js$/, '.ts')

describe('.env.example', () => {
  it('documents exactly the keys the config reads, each with a comment', () => {
    expect([...envExample.keys()].sort()).toEqual([...CONFIG_KEYS].sort())
    const lines = read('.env.example').split('\n')
    for (const key of CONFIG_KEYS) {
      const index = lines.findIndex((line) => line.startsWith(`${key}=`))
      expect(lines[index - 1], `comment above ${key}`).toMatch(/^#/)
    }
  })

  it('gives the same defaults as the config schema', () => {
    for (const key of CONFIG_KEYS) {
      const fallback = (ConfigSchema.properties[key] as { default?: unknown }).default
      expect(envExample.get(key), key).toBe(fallback === undefined ? '' : String(fallback))
    }
  })
})

describe('docker-compose.yml', () => {
  const replicas = ['api-1', 'api-2']

  it('runs postgres and redis (pinned, health-checked), a one-shot migrate, two API replicas and a load balancer', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api-1', 'api-2', 'lb', 'migrate', 'postgres', 'postgres-replica', 'redis'])
    const postgres = compose.services.postgres
    expect(postgres.image).toMatch(/^postgres:\d+\.\d+/)
    expect(postgres.healthcheck.test.join(' ')).toContain('pg_isready')
    const [volumeName] = postgres.volumes[0].split(':')
    expect(Object.keys(compose.volumes)).toContain(volumeName)

    const redis = compose.services.redis
    expect(redis.image).toMatch(/^redis:\d+\.\d+\.\d+/)
    expect(redis.healthcheck.test.join(' ')).toContain('redis-cli ping')

    const migrate = compose.services.migrate
    expect(migrate.restart).toBe('no')
    expect(migrate.depends_on.postgres.condition).toBe('service_healthy')
    const migrateScript = migrate.command.find((part: string) => part.startsWith('dist/'))
    expect(existsSync(join(repoRoot, sourceOf(migrateScript)))).toBe(true)

    for (const name of replicas) {
      const api = compose.services[name]
      expect(api.build, name).toBe('.')
      expect(api.depends_on.migrate.condition).toBe('service_completed_successfully')
      expect(api.depends_on.postgres.condition).toBe('service_healthy')
      expect(api.depends_on.redis.condition).toBe('service_healthy')
      expect(api.environment.HOST).toBe('0.0.0.0')
      expect(new URL(api.environment.REDIS_URL).hostname).toBe('redis')
    }
  })

  it('publishes the API only through the load balancer, and metrics only on the loopback, on their own port', () => {
    const lb = compose.services.lb
    expect(lb.image).toMatch(/^caddy:\d+\.\d+\.\d+/)
    for (const name of replicas) expect(lb.depends_on[name].condition).toBe('service_healthy')
    const apiPort = compose.services['api-1'].environment.PORT
    expect(lb.ports).toEqual([`${apiPort}:${apiPort}`])
    const [caddyfile, target] = lb.volumes[0].split(':')
    expect(target).toBe('/etc/caddy/Caddyfile')
    const proxied = /reverse_proxy\s+([^{]+)\{/.exec(read(caddyfile))?.[1]?.trim().split(/\s+/)
    expect(proxied).toEqual(replicas.map((name) => `${name}:${apiPort}`))

    const published = new Set<string>()
    for (const name of replicas) {
      const env = compose.services[name].environment
      expect(env.METRICS_PORT).not.toBe(env.PORT)
      expect(env.METRICS_HOST).toBe('0.0.0.0') // reachable by a Prometheus in the compose network
      for (const port of compose.services[name].ports ?? []) {
        const [host, hostPort, containerPort] = String(port).split(':')
        expect(host, `${name} publishes ${port}`).toBe('127.0.0.1')
        expect(containerPort).toBe(env.METRICS_PORT)
        expect(published.has(hostPort!)).toBe(false)
        published.add(hostPort!)
      }
    }
  })

  it('only sets environment keys the config knows, and points every service at the compose database', () => {
    for (const name of [...replicas, 'migrate']) {
      const env = compose.services[name].environment
      for (const key of Object.keys(env)) expect(CONFIG_KEYS, `${name}.${key}`).toContain(key)
      const url = new URL(env.DATABASE_URL)
      expect(url.hostname).toBe('postgres')
      expect(url.username).toBe(compose.services.postgres.environment.POSTGRES_USER)
      expect(url.password).toBe(compose.services.postgres.environment.POSTGRES_PASSWORD)
      expect(url.pathname).toBe(`/${compose.services.postgres.environment.POSTGRES_DB}`)
    }
  })

  describe('the streaming replica', () => {
    const primary = compose.services.postgres
    const replica = compose.services['postgres-replica']
    const setting = (name: string) =>
      (primary.command as string[])
        .find((part, i) => primary.command[i - 1] === '-c' && part.startsWith(`${name}=`))
        ?.slice(name.length + 1)

    it('is the same pinned Postgres image as the primary, health-checked, on its own volume, started after the primary', () => {
      expect(replica.image).toBe(primary.image)
      expect(replica.healthcheck.test.join(' ')).toContain('pg_isready')
      const [primaryVolume] = primary.volumes[0].split(':')
      const [replicaVolume, replicaTarget] = replica.volumes[0].split(':')
      expect(replicaVolume).not.toBe(primaryVolume)
      expect(replicaTarget).toBe('/var/lib/postgresql/data')
      expect(Object.keys(compose.volumes)).toContain(replicaVolume)
      expect(replica.depends_on.postgres.condition).toBe('service_healthy')
    })

    it('clones the primary with pg_basebackup -R on first start, as the user and slot the primary creates', () => {
      const mounted = (service: { volumes: string[] }, target: string) =>
        service.volumes.map((v) => v.split(':')).find(([, inside]) => inside === target)?.[0]
      const entrypoint = replica.entrypoint.at(-1) as string
      const script = mounted(replica, entrypoint)
      expect(script, 'the replica entrypoint is mounted from the repository').toBeDefined()
      const replicaScript = read(script!.replace(/^\.\//, ''))
      expect(replicaScript).toMatch(/pg_basebackup[\s\S]*-R\b/)
      expect(replicaScript).toMatch(/application_name=\$REPLICA_NAME/)
      expect(replicaScript).toMatch(/-S "\$REPLICA_NAME"/)
      expect(replicaScript).toMatch(/exec docker-entrypoint\.sh postgres/)
      const init = mounted(primary, '/docker-entrypoint-initdb.d/10-replication.sh')
      expect(init, 'the primary creates the replication user on its first start').toBeDefined()
      const initScript = read(init!.replace(/^\.\//, ''))
      expect(initScript).toMatch(/WITH REPLICATION LOGIN/)
      expect(initScript).toMatch(/pg_create_physical_replication_slot/)
      expect(initScript).toMatch(/host replication \$POSTGRES_REPLICATION_USER all scram-sha-256.*pg_hba\.conf/)
      for (const key of ['POSTGRES_REPLICATION_USER', 'POSTGRES_REPLICATION_PASSWORD', 'REPLICA_NAME']) {
        expect(replica.environment[key], key).toBe(primary.environment[key])
      }
      expect(replica.environment.PRIMARY_HOST).toBe('postgres')
    })

    it('streams from a primary set up for it, with the synchronous standby an option (synchronous_commit on)', () => {
      expect(setting('wal_level')).toBe('replica')
      expect(Number(setting('max_wal_senders'))).toBeGreaterThan(0)
      expect(setting('max_slot_wal_keep_size')).toMatch(/^\d+GB$/)
      expect(setting('synchronous_commit')).toBe('on')
      expect(setting('synchronous_standby_names')).toBe('${POSTGRES_SYNCHRONOUS_STANDBY_NAMES:-}')
      expect(read('docker-compose.yml')).toContain(`POSTGRES_SYNCHRONOUS_STANDBY_NAMES=${primary.environment.REPLICA_NAME}`)
    })

    it('is what the API replicas read from, without waiting for it to start', () => {
      for (const name of replicas) {
        const env = compose.services[name].environment
        const reads = new URL(env.DATABASE_REPLICA_URL)
        const writes = new URL(env.DATABASE_URL)
        expect(reads.hostname).toBe('postgres-replica')
        expect([reads.username, reads.password, reads.pathname]).toEqual([writes.username, writes.password, writes.pathname])
        expect(compose.services[name].depends_on['postgres-replica'], name).toBeUndefined()
      }
    })

    it('publishes both servers on the loopback only, on different ports, and runs them as the postgres user', () => {
      const hostPorts = [primary, replica].map((service) => {
        const [host, hostPort, containerPort] = String(service.ports[0]).split(':')
        expect(host).toBe('127.0.0.1')
        expect(containerPort).toBe('5432')
        return hostPort
      })
      expect(new Set(hostPorts).size).toBe(2)
      for (const service of [primary, replica]) expect(service.user).toBe('postgres')
    })
  })

  it('pins every image by version', () => {
    for (const [name, service] of Object.entries<{ image?: string }>(compose.services)) {
      if (service.image) expect(service.image, name).toMatch(/^[a-z0-9/-]+:\d+\.\d+(\.\d+)?(-[a-z0-9.]+)?$/)
    }
  })
})

describe('Dockerfile', () => {
  const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => m[1] ?? '')

  it('is multi-stage on a pinned Node LTS slim image', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2)
    for (const image of froms) expect(image).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim$/)
  })

  it('installs production dependencies only in the runtime stage and runs as a non-root user', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '))
    expect(runtime).toMatch(/npm ci --omit=dev/)
    const user = /^USER\s+(\S+)/m.exec(runtime)?.[1]
    expect(user).toBeDefined()
    expect(user).not.toBe('root')
    expect(runtime.indexOf('USER')).toBeLessThan(runtime.indexOf('CMD'))
  })

  it('starts the compiled server, exposes PORT and copies what the build compiles', () => {
    const cmd = JSON.parse(/^CMD\s+(\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[]
    const entry = cmd.find((part) => part.startsWith('dist/'))
    expect(entry).toBe('dist/src/server.js')
    // The same Node flags as npm start (which the bench and the demo read: scripts/server-command.ts).
    expect(cmd).toEqual(['node', ...serverNodeFlags(repoRoot), 'dist/src/server.js'])
    expect(cmd).toContain('--max-old-space-size=1024')
    // Node 24's V8 (the image's) lets the young generation grow to 128 MB under load; 16 MB semi-spaces are Node 20's.
    expect(cmd).toContain('--max-semi-space-size=16')
    // Without it, about one process in five pretenures a short-lived allocation site and spends twice the GC time
    // per request for its whole life (docs/write-costs.md, "One process in five: pretenuring").
    expect(cmd).toContain('--no-allocation-site-pretenuring')
    expect(existsSync(join(repoRoot, sourceOf(entry ?? '')))).toBe(true)
    expect(dockerfile).toMatch(
      new RegExp(`EXPOSE ${ConfigSchema.properties.PORT.default} ${ConfigSchema.properties.METRICS_PORT.default}\\b`),
    )
    const built = JSON.parse(read('tsconfig.build.json')).include as string[]
    for (const dir of built) expect(dockerfile, `COPY ${dir}`).toMatch(new RegExp(`^COPY ${dir} `, 'm'))
    // Any other folder the build script runs from (the browser SDK's esbuild script) must be copied too.
    for (const dir of [...pkg.scripts.build.matchAll(/node (\w+)\//g)].map((m) => m[1])) {
      expect(dockerfile, `COPY ${dir}`).toMatch(new RegExp(`^COPY ${dir} `, 'm'))
    }
    expect(dockerfile).toMatch(/RUN npm run build/)
    // Files the API serves from outside dist/ (src/services/public-files.ts) reach the runtime stage.
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '))
    expect(runtime).toMatch(/^COPY assets \.\/assets$/m)
    expect(pkg.scripts.build).toContain('tsconfig.build.json')
  })

  it("copies every npm workspace's package.json before each npm ci, and the workspace before the build", () => {
    const stages = dockerfile.split(/^FROM /m).slice(1)
    for (const workspace of pkg.workspaces as string[]) {
      for (const stage of stages) {
        const copied = stage.indexOf(`COPY ${workspace}/package.json ./${workspace}/`)
        expect(copied, `${workspace}/package.json`).toBeGreaterThan(-1)
        expect(copied).toBeLessThan(stage.indexOf('RUN npm ci'))
      }
      const build = stages[0] ?? ''
      expect(build.indexOf(`COPY ${workspace} ./${workspace}`)).toBeGreaterThan(-1)
      expect(build.indexOf(`COPY ${workspace} ./${workspace}`)).toBeLessThan(build.indexOf('RUN npm run build'))
    }
  })
})

describe('package.json', () => {
  it('has the scripts the README and CI use', () => {
    for (const script of ['start', 'dev', 'build', 'typecheck', 'lint', 'test', 'db:migrate', 'cli', 'bench']) {
      expect(pkg.scripts[script], script).toBeTruthy()
    }
    expect(pkg.scripts.start).toContain('dist/src/server.js')
  })
})
