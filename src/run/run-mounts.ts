import type { RunMount } from '../system/mounts.js';

export type { RunMount } from '../system/mounts.js';

/** The mount step's exit status when a mount failed: the command was not started. */
export const MOUNT_FAILED_STATUS = 125;
const MARK = 'warren: could not mount';

/**
 * `sh -c SCRIPT warren-mount TYPE OPTIONS TARGET … -- COMMAND…`: every mount in order, then
 * exec the command. A mount that fails stops the run before the command starts, and says which
 * and why on stderr (so in the run's log). Paths travel as arguments, never inside the script.
 */
const SCRIPT = [
  'while [ "$1" != -- ]; do',
  '  out=$(mount -t "$1" "$1" -o "$2" "$3" 2>&1) || {',
  `    printf '${MARK} %s on %s for this run: %s; the command was not run\\n' "$1" "$3" "$(printf '%s' "$out" | tr '\\n' ' ')" >&2`,
  `    exit ${MOUNT_FAILED_STATUS}`,
  '  }',
  '  shift 3',
  'done',
  'shift',
  'exec "$@"',
].join('\n');

/** The argv prefix that makes `mounts` and then execs what follows it (nothing when there are none). */
export function mountArgv(mounts: readonly RunMount[]): string[] {
  if (mounts.length === 0) return [];
  return ['sh', '-c', SCRIPT, 'warren-mount', ...mounts.flatMap((m) => [m.fsType, m.options, m.target]), '--'];
}

/** Why a run ended before its command started, in the mount step's own words from the log; null otherwise. */
export function mountFailureReason(exitCode: number | null, logTail: string): string | null {
  if (exitCode !== MOUNT_FAILED_STATUS) return null;
  const line = logTail.split('\n').findLast((l) => l.startsWith(MARK));
  return line === undefined ? null : line.slice('warren: '.length);
}
