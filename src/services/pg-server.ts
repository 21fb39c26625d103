import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { UserConfig } from '../config/user-schema.js';
import { WarrenError } from '../errors.js';
import { detectContainment, SERVICE_UID } from '../system/containment.js';
import { isPortFree } from '../run/ports.js';
import { runTool } from '../system/tool.js';
import { writeFileAtomic } from '../util/atomic.js';
import { acquireWaiting } from '../util/lockfile.js';
import { reportStep, SILENT, type Reporter } from '../workspace/reporter.js';
import { daemonState, startDaemon, stopDaemon, type Stopped } from '../run/daemon.js';
import { resolveLimits, type RoleLimits } from './pg-limits.js';
import { pgQuery, pgTool, type PgConn } from './pg-sql.js';
import { logSize, logTail, waitReady } from './ready.js';
import { likelyCause, removeTree } from '../system/remove-tree.js';

/**
 * The PostgreSQL server a task's database lives on: the user's own (postgres.url in
 * $WARREN_HOME/config.yaml, or WARREN_POSTGRES_URL — never a repository's warren.yaml), or by
 * default one cluster of warren's own under $WARREN_HOME/services/postgres: made by initdb on
 * first use, listening on a unix socket in that folder and on 127.0.0.1 at a port of its own,
 * started on demand by whichever command needs it, stopped by `gc` once no task uses it.
 *
 * PostgreSQL refuses to run as root. When warren is root, initdb and the server run in a user
 * namespace of their own that maps uid 1000 inside to root outside (containment.ts's
 * serviceArgv): the server owns its files yet is not uid 0 to itself, and has no capability
 * outside that namespace. As any other user they run as that user. Every role authenticates by
 * password (scram-sha-256); warren's pg_hba.conf lets a task's role reach only the database of
 * the same name (`sameuser`), and only warren's admin role reach the rest.
 */

export interface PgServer {
  kind: 'warren' | 'user';
  /** warren's admin connection (a role that may create databases and roles). */
  admin: PgConn;
  /** Where a task's commands connect (TCP). */
  host: string;
  port: number;
  /** What each role warren makes on it may take of it: the user's defaults, or a service's own (createTaskDatabase). */
  roles: RoleLimits;
}

/** A server's address, before the roles' limits are known. */
type Endpoint = Omit<PgServer, 'roles'>;

export interface ServerReady {
  server: PgServer;
  /** Set when warren's own server had ended by itself and was started again: what to report. */
  restarted: string | null;
}

const ADMIN = 'warren';

export function clusterDir(home: string): string {
  return path.join(home, 'services', 'postgres');
}

interface ClusterFile {
  port: number;
  password: string;
}

/** The user's server, when the user named one. */
export function userServerUrl(user: UserConfig): string | null {
  return process.env.WARREN_POSTGRES_URL || user.postgres?.url || null;
}

export function parseServerUrl(url: string): Endpoint {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new WarrenError(
      'CONFIG_INVALID',
      'the PostgreSQL server URL (postgres.url or WARREN_POSTGRES_URL) is not a URL; nothing was changed.',
      {
        hint: 'Use postgres://USER:PASSWORD@HOST:PORT/postgres.',
      },
    );
  }
  const host = u.searchParams.get('host') ?? (decodeURIComponent(u.hostname) || '127.0.0.1');
  const port = Number(u.port || u.searchParams.get('port') || 5432);
  const admin: PgConn = {
    host,
    port,
    user: decodeURIComponent(u.username) || 'postgres',
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres',
  };
  return { kind: 'user', admin, host: host.startsWith('/') ? '127.0.0.1' : host, port };
}

/** The server to use, started when it is warren's own and not running (making and starting it are steps told to `reporter`). */
export async function ensureServer(home: string, user: UserConfig, reporter: Reporter = SILENT): Promise<ServerReady> {
  const url = userServerUrl(user);
  const roles = resolveLimits(user.postgres?.limits, undefined).limits;
  if (url) {
    const server = { ...parseServerUrl(url), roles };
    try {
      await pgQuery(server.admin, 'SELECT 1');
    } catch (err) {
      throw new WarrenError(
        'SERVICE_UNAVAILABLE',
        `the PostgreSQL server you named (${server.admin.user}@${server.admin.host}:${server.admin.port}) cannot be reached: ${err instanceof Error ? err.message : String(err)}; nothing was changed.`,
        { hint: 'Start it, or fix postgres.url in $WARREN_HOME/config.yaml (or WARREN_POSTGRES_URL).' },
      );
    }
    return { server, restarted: null };
  }
  const dir = clusterDir(home);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = await acquireWaiting(path.join(dir, 'lock'), 'start postgres', 180_000);
  if (!lock.ok) {
    throw new WarrenError(
      'LOCK_TIMEOUT',
      `another warren has been starting the PostgreSQL server for 3 minutes; nothing was changed.`,
      {
        hint: `See ${path.join(dir, 'postgres.log')}.`,
      },
    );
  }
  try {
    const made = fs.existsSync(path.join(dir, 'data', 'PG_VERSION')) && fs.existsSync(path.join(dir, 'cluster.json'));
    const cluster = made
      ? readCluster(dir)
      : await reportStep(reporter, "creating warren's PostgreSQL cluster (once)", () => initCluster(dir));
    const state = daemonState(path.join(dir, 'daemon'));
    const server = { ...ownServer(dir, cluster), roles };
    if (state.state === 'running') return { server, restarted: null };
    const restarted =
      state.state === 'exited'
        ? `warren's PostgreSQL server had stopped by itself (${state.exitCode === null ? 'killed' : `exit ${state.exitCode}`}); it was started again (log ${path.join(dir, 'postgres.log')})`
        : null;
    const started = await reportStep(reporter, "starting warren's PostgreSQL server", () => startCluster(dir, cluster));
    return { server: { ...started, roles }, restarted };
  } finally {
    lock.lock.release();
  }
}

function ownServer(dir: string, cluster: ClusterFile): Endpoint {
  return {
    kind: 'warren',
    admin: {
      host: path.join(dir, 'run'),
      port: cluster.port,
      user: ADMIN,
      password: cluster.password,
      database: 'postgres',
    },
    host: '127.0.0.1',
    port: cluster.port,
  };
}

function readCluster(dir: string): ClusterFile {
  const v = JSON.parse(fs.readFileSync(path.join(dir, 'cluster.json'), 'utf8')) as ClusterFile;
  if (typeof v.port !== 'number' || typeof v.password !== 'string')
    throw new Error(`${dir}/cluster.json is not warren's`);
  return v;
}

const isRoot = (): boolean => process.getuid?.() === 0;

/**
 * initdb as a user that is not root (see the module comment), with warren's admin role and
 * pg_hba.conf: made in `data.new` and renamed to `data` last, after cluster.json, so a cluster
 * cut off half way is never taken for a made one (and holds nothing: it is made again).
 */
/**
 * A half-made cluster folder removed. An initdb of a warren killed meanwhile may still be writing
 * into it (ENOTEMPTY on a folder it just filled): removed again, a few times over a few seconds,
 * before it is given up as an error.
 */
async function removeStraggled(target: string, inside: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const failures = removeTree(target, { inside });
    if (failures.length === 0) return;
    if (attempt >= 20)
      throw new Error(`could not delete ${failures.map((f) => `${f.path} (${likelyCause(f.code)})`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function initCluster(dir: string): Promise<ClusterFile> {
  const data = path.join(dir, 'data.new');
  await removeStraggled(data, dir);
  await removeStraggled(path.join(dir, 'data'), dir);
  const password = randomBytes(18).toString('hex');
  const pwfile = path.join(dir, 'initdb.pw');
  fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  const initdb = [
    pgTool('initdb'),
    '-D',
    data,
    '-U',
    ADMIN,
    `--pwfile=${pwfile}`,
    '-A',
    'scram-sha-256',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-instructions',
  ];
  const argv = isRoot()
    ? ['unshare', '--user', `--map-user=${SERVICE_UID}`, `--map-group=${SERVICE_UID}`, '--', ...initdb]
    : initdb;
  const result = await runTool(argv, { timeoutMs: 300_000 });
  fs.rmSync(pwfile, { force: true });
  if (result.exitCode !== 0) {
    throw new WarrenError(
      'SERVICE_FAILED',
      `initdb could not make warren's PostgreSQL cluster in ${data}: ${result.stderr.trim().split('\n').slice(-3).join(' ')}; nothing else was changed.`,
      {
        hint: isRoot()
          ? 'As root, warren runs PostgreSQL in a user namespace (unshare --user): check that it is permitted here.'
          : 'See the message.',
      },
    );
  }
  fs.writeFileSync(
    path.join(data, 'pg_hba.conf'),
    [
      '# warren: its admin role reaches every database; a task role only the database of its own name.',
      `local all ${ADMIN} scram-sha-256`,
      `host all ${ADMIN} 127.0.0.1/32 scram-sha-256`,
      'local sameuser all scram-sha-256',
      'host sameuser all 127.0.0.1/32 scram-sha-256',
      '',
    ].join('\n'),
  );
  const cluster: ClusterFile = { port: await freePort(), password };
  writeFileAtomic(path.join(dir, 'cluster.json'), `${JSON.stringify(cluster)}\n`, { mode: 0o600 });
  fs.renameSync(data, path.join(dir, 'data'));
  return cluster;
}

/** Below the tasks' port range (20000-32767) and the ephemeral one. */
async function freePort(avoid = new Set<number>()): Promise<number> {
  for (let port = 15432; port < 16432; port++) if (!avoid.has(port) && (await isPortFree(port))) return port;
  throw new WarrenError('SERVICE_FAILED', 'no free port in 15432-16431 for PostgreSQL; nothing was changed.', {
    hint: 'Free one, or name a server of yours as postgres.url in $WARREN_HOME/config.yaml.',
  });
}

async function startCluster(dir: string, cluster: ClusterFile): Promise<Endpoint> {
  const containment = await detectContainment(path.join(dir, '..', '..', 'cache'));
  if (containment.kind === 'process-group' && isRoot()) {
    throw new WarrenError(
      'SERVICE_UNAVAILABLE',
      `PostgreSQL refuses to run as root, and warren cannot give it a user namespace here (${containment.reason}); nothing was changed.`,
      {
        hint: 'Run warren as a user other than root, or name a server of yours as postgres.url in $WARREN_HOME/config.yaml.',
      },
    );
  }
  const run = path.join(dir, 'run');
  fs.mkdirSync(run, { recursive: true, mode: 0o700 });
  // A postmaster.pid left by a killed server is PostgreSQL's to judge: it names pid 2 of a namespace that is gone
  // (the new server is pid 2 of its own, so it knows the file is stale), and it refuses to start while the
  // shared memory that file names is still attached (a server of this folder that warren lost track of).
  const log = path.join(dir, 'postgres.log');
  const tried = new Set<number>();
  for (let attempt = 0; ; attempt++) {
    const from = logSize(log);
    const record = startDaemon({
      dir: path.join(dir, 'daemon'),
      argv: [
        pgTool('postgres'),
        '-D',
        path.join(dir, 'data'),
        '-k',
        run,
        '-p',
        String(cluster.port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_permissions=0700',
        '-c',
        'shared_buffers=32MB',
        '-c',
        'max_connections=200',
      ],
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      log,
      containment,
      notRoot: true,
    });
    const ready = await waitReady({
      check: { log: 'database system is ready to accept connections' },
      port: null,
      log,
      logFrom: from,
      timeoutMs: 60_000,
      alive: () => daemonState(path.join(dir, 'daemon')).state === 'running',
    });
    if (ready.ready) return ownServer(dir, cluster);
    await stopDaemon(path.join(dir, 'daemon'), 5000, 'SIGINT');
    const tail = logTail(log, from);
    // Another server took the port since: move to a free one (no task's URL names it while none runs).
    if (/could not bind|Address already in use/.test(tail) && attempt < 3) {
      tried.add(cluster.port);
      cluster.port = await freePort(tried);
      writeFileAtomic(path.join(dir, 'cluster.json'), `${JSON.stringify(cluster)}\n`, { mode: 0o600 });
      continue;
    }
    throw new WarrenError(
      'SERVICE_FAILED',
      `warren's PostgreSQL server did not start (${ready.why === 'timeout' ? 'not ready within 60 s' : `pid ${record.pid} exited`}); it was stopped. Its log (${log}) ends:\n${tail}`,
      { hint: 'Fix what the log names, and run the command again.' },
    );
  }
}

/** `gc`: stops warren's own server (fast shutdown: clients are disconnected). */
export async function stopCluster(home: string): Promise<Stopped | null> {
  const dir = path.join(clusterDir(home), 'daemon');
  if (daemonState(dir).state !== 'running') return null;
  return stopDaemon(dir, 30_000, 'SIGINT');
}

export function clusterRunning(home: string): boolean {
  return daemonState(path.join(clusterDir(home), 'daemon')).state === 'running';
}
