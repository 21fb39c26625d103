import { lastLines } from './state-folders.js';
import type { PodService } from './pod-service.js';
import type { ProjectContext } from '../../workspace/context.js';

/**
 * A task's own PostgreSQL server in its pod (a postgres service of a task in a cluster): the
 * server is the service's process there, started and held like a redis in a pod
 * (pod-service.ts); its data folder is in the pod's own storage (the emptyDir at /work of
 * warren's template, beside the clone), so it lasts as long as the claim and goes with it.
 * PostgreSQL refuses to run as root: a pod that runs as a user of its own runs it as that
 * user; a root pod that may change its user (CAP_SETUID) runs it as uid 70; a root pod that may
 * not is refused, saying so (the log's line, then exit 77). The server's programs are the pod
 * image's: on its PATH, else Debian's /usr/lib/postgresql/N/bin.
 */

/** The line PostgreSQL logs once it accepts connections (then its port is asked, in the pod). */
export const POSTGRES_READY = 'database system is ready to accept connections';

/** What the server's start says when the pod cannot run it (exit 77: root; 78: no PostgreSQL in the image). */
export const POD_CANNOT_RUN_AS_ROOT = 'warren: PostgreSQL refuses to run as root';
export const POD_HAS_NO_POSTGRES = "warren: this pod's image has no PostgreSQL server";

/** The folder of a database's server in the pod (its data in `data`, its socket beside it). */
export function podPgDir(database: string): string {
  if (!/^[a-z0-9_]{1,63}$/.test(database)) throw new Error(`not a database name of warren's: ${database}`);
  return `/work/postgres/${database}`;
}

// In the pod, in sh: $bin (the server's programs and its clients), else a line saying so and exit 78.
const FIND_BIN = `complete() { for p in postgres initdb psql pg_dump; do [ -x "$1/$p" ] || return 1; done; }
bin=""
if command -v postgres >/dev/null 2>&1 && complete "$(dirname "$(command -v postgres)")"; then bin=$(dirname "$(command -v postgres)"); fi
if [ -z "$bin" ]; then for d in /usr/lib/postgresql/*/bin; do if complete "$d"; then bin=$d; fi; done; fi
if [ -z "$bin" ]; then echo "${POD_HAS_NO_POSTGRES} (postgres, initdb, psql and pg_dump in one folder: neither on PATH nor in /usr/lib/postgresql/*/bin)" >&2; exit 78; fi`;

// $as: how the server's programs run as a user that is not root, else a line saying why not and exit 77.
const NOT_ROOT = `as=""
if [ "$(id -u)" = 0 ]; then
  if setpriv --reuid=70 --regid=70 --clear-groups true 2>/dev/null; then as="setpriv --reuid=70 --regid=70 --clear-groups"
  else echo "${POD_CANNOT_RUN_AS_ROOT}, and this pod runs as root (uid 0) without the right to change its user (CAP_SETUID)" >&2; exit 77; fi
fi`;

/**
 * The server: its cluster made on the first start (initdb into `data.new`, renamed when
 * complete, so a start cut off makes it again), then `postgres` in the foreground on the pod's
 * loopback at `port`. Local connections (the socket in the pod's folder) are trusted: only the
 * pod's own processes reach it, and they are the task's; TCP asks the role's password as on
 * warren's server here. Shared memory as files of its folder (mmap): a pod's /dev/shm is small,
 * and nothing of it outlives the server in the pod's IPC namespace.
 */
export function podPostgresArgv(database: string, port: number): string[] {
  const script = `${FIND_BIN}
${NOT_ROOT}
dir=$1; port=$2
$as mkdir -p "$dir" || exit 1
if [ ! -s "$dir/data/PG_VERSION" ]; then
  $as rm -rf "$dir/data.new"
  $as "$bin/initdb" -D "$dir/data.new" -U warren --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >&2 || exit 1
  $as mv "$dir/data.new" "$dir/data" || exit 1
fi
exec $as "$bin/postgres" -D "$dir/data" -p "$port" -k "$dir" -c listen_addresses=127.0.0.1 -c shared_memory_type=mmap -c dynamic_shared_memory_type=mmap`;
  return ['sh', '-c', script, 'warren-postgres', podPgDir(database), String(port)];
}

/**
 * One of the server's client programs in the pod (`psql`, `pg_dump`), over the socket of the
 * server of `server.database` as `as` (trusted there), with `args` after the connection's.
 */
export function podPgClientArgv(
  program: 'psql' | 'pg_dump',
  server: { database: string; port: number },
  as: { user: string; database: string },
  args: readonly string[],
): string[] {
  const script = `${FIND_BIN}
p=$1; dir=$2; port=$3; user=$4; db=$5; shift 5
exec "$bin/$p" -h "$dir" -p "$port" -U "$user" -d "$db" "$@"`;
  const dir = podPgDir(server.database);
  return ['sh', '-c', script, 'warren-pg', program, dir, String(server.port), as.user, as.database, ...args];
}

export interface PodPgResult {
  status: number;
  stdout: Buffer;
  stderr: string;
}

/** A client program of the server, exec'd in the pod of a running server (`place`), with `input` on its standard input. */
export async function podPgExec(
  ctx: ProjectContext,
  place: PodService,
  argv: readonly string[],
  input?: Buffer,
): Promise<PodPgResult> {
  const { connect, execCollect, settingsOf } = await import('./cluster.js');
  const cluster = connect(place.cluster, settingsOf(ctx.user, place.cluster, `pod ${place.pod}`));
  return execCollect(cluster, place.pod, argv, input);
}

/** What a client program in the pod said, in a line: its errors, else the end of its output. */
export function podPgSaid(result: PodPgResult): string {
  const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
  const errors = lines.filter((l) => /\b(ERROR|FATAL)\b|^warren:/.test(l));
  return (errors.length > 0 ? errors.slice(0, 3).join(' ') : lastLines(result.stderr)) || `exit ${result.status}`;
}
