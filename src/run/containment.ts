import { spawnSync } from 'node:child_process';
import { hasProc } from './proc.js';

/**
 * How a run's process tree is held together so that it can be ended as a whole.
 *
 * - `pid-namespace` (Linux): the command runs in its own PID namespace. When the namespace's
 *   first process exits, the kernel kills every other process in it — including ones that
 *   called setsid() or double-forked — so nothing of the run can outlive it. `setpriv
 *   --pdeathsig KILL` makes the wrapper die with warren (even on SIGKILL), and `unshare
 *   --kill-child` (or bwrap `--die-with-parent`) carries that on to the namespace.
 * - `process-group` (elsewhere, or where namespaces are not permitted): the command leads
 *   its own process group, which warren signals. A process that leaves the group (setsid)
 *   escapes this; warren records the fallback as an event on every run.
 */
export type ContainmentKind = 'pid-namespace' | 'process-group';

export interface Containment {
  kind: ContainmentKind;
  /** Why this kind was chosen (shown in the run's event). */
  reason: string;
}

let cached: Containment | null = null;

export function detectContainment(): Containment {
  cached ??= probe();
  return cached;
}

function probe(): Containment {
  if (process.platform !== 'linux' || !hasProc()) {
    return { kind: 'process-group', reason: `${process.platform} has no PID namespaces` };
  }
  const result = spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'unshare', '--pid', '--fork', '--kill-child', '--mount-proc', '--', 'true'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    timeout: 5000,
  });
  if (result.error) return { kind: 'process-group', reason: `setpriv/unshare unavailable (${result.error.message})` };
  if (result.status !== 0) {
    return { kind: 'process-group', reason: `unshare --pid is not permitted here: ${result.stderr.trim() || `exit ${result.status}`}` };
  }
  return { kind: 'pid-namespace', reason: 'unshare --pid --fork --kill-child' };
}

/**
 * The namespace's first process. It must not be the command itself: PID 1 ignores every
 * signal it has no handler for, so a plain command would shrug off SIGTERM and Ctrl-C. This
 * small init forwards them to the command, waits for it and exits with its status; its exit
 * then ends the namespace. stdin is handed over through fd 3 because sh gives a background
 * job /dev/null as stdin; `wait`'s own "Terminated" job report is silenced (the run's
 * record carries the signal).
 */
const INIT = [
  'exec 3<&0',
  'trap \'kill -TERM "$c" 2>/dev/null\' TERM',
  'trap \'kill -INT "$c" 2>/dev/null\' INT',
  'trap \'kill -HUP "$c" 2>/dev/null\' HUP',
  '"$@" <&3 3<&- &',
  'c=$!',
  'exec 3<&-',
  'while :; do',
  '  wait "$c" 2>/dev/null; s=$?',
  '  kill -0 "$c" 2>/dev/null && continue',
  '  wait "$c" 2>/dev/null; t=$?; [ "$t" -ne 127 ] && s=$t',
  '  break',
  'done',
  'exit "$s"',
].join('\n');

/** The argv that runs `argv` (already sandbox-wrapped, if at all) under this containment. */
export function containedArgv(kind: ContainmentKind, argv: readonly string[], sandboxed: boolean): string[] {
  if (kind === 'process-group') return [...argv];
  // bwrap --unshare-pid brings its own PID namespace and reaping init; only the death signal is added.
  if (sandboxed) return ['setpriv', '--pdeathsig', 'KILL', '--', ...argv];
  return ['setpriv', '--pdeathsig', 'KILL', '--', 'unshare', '--pid', '--fork', '--kill-child', '--mount-proc', '--', 'sh', '-c', INIT, 'warren-init', ...argv];
}
