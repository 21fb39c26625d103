import { bootKey, recall, remember } from './boot-cache.js';
import { runBounded } from './spawn.js';
import { hasProc } from './proc.js';
import { mountArgv, type RunMount } from './run-mounts.js';
import { stageArgv, type StagedSource } from './sandbox-uid.js';

/**
 * How a run's process tree is held together so that it can be ended as a whole.
 *
 * - `pid-namespace` (Linux, root): the command runs in its own PID namespace. When the
 *   namespace's first process exits, the kernel kills every other process in it — including
 *   ones that called setsid() or double-forked — so nothing of the run can outlive it.
 *   `setpriv --pdeathsig KILL` makes the wrapper die with warren (even on SIGKILL), and
 *   `unshare --kill-child` (or bwrap `--die-with-parent`) carries that on to the namespace.
 * - `user-namespace` (Linux, not root): the same PID namespace, made inside an unprivileged
 *   user namespace (which is what lets a user who is not root make one). Its first process is
 *   root of that namespace just long enough to mount the run's copy-on-write layers, then
 *   enters a nested user namespace that maps the real uid and gid back, so the command runs
 *   as the user it was started by, with no capabilities.
 * - `process-group` (elsewhere, or where neither is permitted): the command leads its own
 *   process group, which warren signals. A process that leaves the group (setsid) escapes
 *   this; warren records the fallback as an event on every run.
 */
export type Containment =
  | { kind: 'pid-namespace'; reason: string }
  | { kind: 'user-namespace'; reason: string; uid: number; gid: number }
  | { kind: 'process-group'; reason: string };

export type ContainmentKind = Containment['kind'];

/** Per process, by what the answer depends on here: the user and where tools are found. */
const cached = new Map<string, Containment>();

/**
 * Probed once per process (and user and PATH); a namespace that worked is also remembered under `cacheDir` (when
 * given) for as long as the facts it depends on stay the same (src/system/boot-cache.ts).
 */
export async function detectContainment(cacheDir?: string): Promise<Containment> {
  const settings = `${process.getuid?.()}\0${process.env.PATH ?? ''}`;
  const known = cached.get(settings);
  if (known) return known;
  const key = cacheDir ? bootKey() : null;
  const recalled = cacheDir ? recall(cacheDir, 'containment', key, isContainment) : undefined;
  const found = recalled ?? (await probe());
  // Only a namespace that worked is remembered: a refusal may be passing (a probe that timed out
  // on a loaded machine), and the fallback it leads to is weaker.
  if (cacheDir && !recalled && found.kind !== 'process-group') remember(cacheDir, 'containment', key, found);
  cached.set(settings, found);
  return found;
}

function isContainment(v: unknown): v is Containment {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as Record<string, unknown>;
  if (typeof c.reason !== 'string') return false;
  if (c.kind === 'user-namespace') return c.uid === process.getuid?.() && c.gid === process.getgid?.();
  return c.kind === 'pid-namespace';
}

const PID_NS = ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc', '--'];
const USER_PID_NS = [
  'unshare',
  '--user',
  '--map-root-user',
  '--mount',
  '--pid',
  '--fork',
  '--kill-child',
  '--mount-proc',
  '--',
];

/** What the init runs the command through (below); probed with the namespace, so a machine without it is told why. */
const DEFAULT_SIGNALS = ['env', '--default-signal'];

/** Back to the real user, in a nested user namespace: the command runs as uid/gid with no capabilities. */
function asUser(uid: number, gid: number): string[] {
  return ['unshare', '--user', `--map-user=${uid}`, `--map-group=${gid}`, '--'];
}

/** The kind is tried for real (the wrapper around `true`): permission to unshare has no other sign without exceptions. */
async function probe(): Promise<Containment> {
  if (process.platform !== 'linux' || !hasProc()) {
    return { kind: 'process-group', reason: `${process.platform} has no PID namespaces` };
  }
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  if (uid === 0) {
    const refused = await tryWrapper([...PID_NS, ...DEFAULT_SIGNALS, 'true']);
    return refused === null
      ? { kind: 'pid-namespace', reason: 'unshare --pid --fork --kill-child' }
      : { kind: 'process-group', reason: `unshare --pid is not permitted here: ${refused}` };
  }
  const refused = await tryWrapper([...USER_PID_NS, ...asUser(uid, gid), ...DEFAULT_SIGNALS, 'true']);
  if (refused === null) {
    return {
      kind: 'user-namespace',
      reason: `not root: unshare --user --map-root-user --pid --fork --kill-child, then --map-user=${uid} --map-group=${gid} so commands run as uid ${uid} with no capabilities`,
      uid,
      gid,
    };
  }
  return { kind: 'process-group', reason: `not root, and unshare --user --pid is not permitted here: ${refused}` };
}

/** Null when `setpriv --pdeathsig KILL -- ARGV` ran and exited 0; else why not. */
async function tryWrapper(argv: readonly string[]): Promise<string | null> {
  const result = await runBounded({
    argv: ['setpriv', '--pdeathsig', 'KILL', '--', ...argv],
    stdout: 'ignore',
    stderr: 'collect',
    timeoutMs: 5000,
  });
  if (result.spawnError) return `setpriv/unshare unavailable (${result.spawnError.message})`;
  if (result.timedOut) return 'the probe did not finish within 5 s';
  if (result.exitCode !== 0)
    return result.stderr.toString('utf8').trim().split('\n')[0] || `exit ${result.exitCode ?? result.signal}`;
  return null;
}

/**
 * The namespace's first process. It must not be the command itself: PID 1 ignores every
 * signal it has no handler for, so a plain command would shrug off SIGTERM and Ctrl-C. This
 * small init forwards them to the command, waits for it and exits with its status; its exit
 * then ends the namespace. stdin is handed over through fd 3 because sh gives a background
 * job /dev/null as stdin; `wait`'s own "Terminated" job report is silenced (the run's
 * record carries the signal). sh also starts a background job with SIGINT and SIGQUIT ignored
 * (POSIX, without job control), which the command would inherit and no `trap -` can undo: a
 * Python child would shrug off Ctrl-C. So the job is `env --default-signal` (coreutils 8.31),
 * which puts every signal back to its default before running the command through a plain
 * `exec` (a command whose name holds `=` is never taken for one of env's assignments).
 */
const INIT = initScript({ stdin: 'handed-over', statusFile: false });

/**
 * The namespace's first process, as a run's (`stdin` handed over through fd 3, see above) or a
 * service's (stdin closed; on the command's exit its status written to the file named by `$1`,
 * so that a crash is told from a stop). One script for both: every command, a service's too,
 * starts with every signal at its default.
 */
function initScript(o: { stdin: 'handed-over' | 'closed'; statusFile: boolean }): string {
  const handedOver = o.stdin === 'handed-over';
  return [
    ...(o.statusFile ? ['st=$1; shift'] : []),
    ...(handedOver ? ['exec 3<&0'] : []),
    'trap \'kill -TERM "$c" 2>/dev/null\' TERM',
    'trap \'kill -INT "$c" 2>/dev/null\' INT',
    'trap \'kill -HUP "$c" 2>/dev/null\' HUP',
    `env --default-signal sh -c 'exec "$@"' warren-command "$@" ${handedOver ? '<&3 3<&-' : '</dev/null'} &`,
    'c=$!',
    ...(handedOver ? ['exec 3<&-'] : []),
    'while :; do',
    '  wait "$c" 2>/dev/null; s=$?',
    '  kill -0 "$c" 2>/dev/null && continue',
    '  wait "$c" 2>/dev/null; t=$?; [ "$t" -ne 127 ] && s=$t',
    '  break',
    'done',
    ...(o.statusFile ? ['printf \'%s\\n\' "$s" > "$st"'] : []),
    'exit "$s"',
  ].join('\n');
}

/**
 * The argv that runs `argv` (already sandbox-wrapped, if at all) under this containment, with
 * `mounts` made first in the run's own mount namespace (visible to the command only), and
 * `command` (the user's, before any sandbox wrapping) looked up there once they are. With
 * `staged` (root, in a sandbox: sandbox-uid.ts), the clones the sandbox binds are made first,
 * in a mount namespace of the run's own, and the rest runs as the sandbox's uid.
 */
export function containedArgv(
  containment: Containment,
  argv: readonly string[],
  sandboxed: boolean,
  mounts: readonly RunMount[] = [],
  command = '',
  staged: readonly StagedSource[] = [],
): string[] {
  if (staged.length > 0) {
    if (!sandboxed) throw new Error('containedArgv: staged clones are for a sandbox');
    // The layers (already on the clones: Staging.mount) are mounted as the sandbox's uid, in a mount
    // namespace of its own; the command is looked up by bwrap, inside, where they are seen.
    const layers = mounts.length > 0 ? ['unshare', '--mount', '--', ...mountArgv(mounts, '')] : [];
    const stage = ['unshare', '--mount', '--', ...stageArgv(staged), ...layers];
    // bwrap --unshare-pid brings its own PID namespace; the death signal is set again after the uid changes.
    return containment.kind === 'process-group'
      ? [...stage, ...argv]
      : ['setpriv', '--pdeathsig', 'KILL', '--', ...stage, ...argv];
  }
  if (containment.kind === 'process-group') {
    if (mounts.length > 0)
      throw new Error('containedArgv: mounts need a namespace; the caller checks this before spawning');
    return [...argv];
  }
  const deathsig = ['setpriv', '--pdeathsig', 'KILL', '--'];
  const user = containment.kind === 'user-namespace' ? asUser(containment.uid, containment.gid) : [];
  if (sandboxed) {
    // bwrap --unshare-pid brings its own PID namespace and reaping init; only the death signal
    // is added, and a mount namespace when there is something to mount (bwrap binds it along).
    if (mounts.length === 0) return [...deathsig, ...argv];
    const mountNs =
      containment.kind === 'user-namespace'
        ? ['unshare', '--user', '--map-root-user', '--mount', '--']
        : ['unshare', '--mount', '--'];
    return [...deathsig, ...mountNs, ...mountArgv(mounts, command), ...user, ...argv];
  }
  const ns = containment.kind === 'user-namespace' ? USER_PID_NS : PID_NS;
  return [...deathsig, ...ns, ...mountArgv(mounts, command), ...user, 'sh', '-c', INIT, 'warren-init', ...argv];
}

/** A service's first process inside its namespace (initScript): its exit status goes to `$1`. */
const SERVICE_INIT = initScript({ stdin: 'closed', statusFile: true });

/** The uid a service that refuses root (PostgreSQL) runs as, in a user namespace of its own, when warren is root. */
export const SERVICE_UID = 1000;

/**
 * The argv of a long-running service (src/run/daemon.ts): like a run's, in a PID namespace
 * of its own where the machine allows it, but with no death signal (it outlives the command
 * that started it; `warren service stop`, `rm` and `gc` end it), and its exit status written to
 * `statusFile`. `notRoot`: when warren is root, the command runs as SERVICE_UID in a user
 * namespace that maps it to root outside — it owns warren's files, yet is not uid 0 to itself
 * (PostgreSQL refuses to run as root; it has no capabilities outside its namespace either).
 */
export function serviceArgv(
  containment: Containment,
  argv: readonly string[],
  statusFile: string,
  notRoot: boolean,
  mounts: readonly RunMount[] = [],
): string[] {
  const init = ['sh', '-c', SERVICE_INIT, 'warren-service', statusFile, ...argv];
  if (containment.kind === 'process-group') {
    if (mounts.length > 0)
      throw new Error('serviceArgv: mounts need a namespace; the caller checks this before spawning');
    return init;
  }
  // The layers are mounted in the service's own mount namespace (unshare --mount-proc makes one), as a run's are.
  const mount = mountArgv(mounts);
  if (containment.kind === 'user-namespace')
    return [...USER_PID_NS, ...mount, ...asUser(containment.uid, containment.gid), ...init];
  return [...PID_NS, ...mount, ...(notRoot ? asUser(SERVICE_UID, SERVICE_UID) : []), ...init];
}
