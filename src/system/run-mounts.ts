import type { RunMount } from './mounts.js';

export type { RunMount } from './mounts.js';

/** The mount step's exit status when a mount failed: the command was not started. */
export const MOUNT_FAILED_STATUS = 125;
/** Its status when the command is not in the run's view (what a shell says for "not found"). */
export const NOT_FOUND_STATUS = 127;
const MARK = 'warren: could not mount';
const NOT_FOUND_MARK = 'warren: command';

/**
 * `sh -c SCRIPT warren-mount TYPE OPTIONS TARGET … -- NAME COMMAND…`: every mount in order, then
 * exec the command. A mount that fails stops the run before the command starts, and says which
 * and why on stderr (so in the run's log). Then NAME, the command as the user typed it
 * (`./node_modules/.bin/x`, or a bare name looked up on PATH), is looked up here, where the
 * mounted layers are seen: on the host a namespaced layer is an empty folder, so warren could
 * not tell there. Paths travel as arguments, never inside the script.
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
  'cmd=$1',
  'shift',
  'case $cmd in',
  '  "") found=1 ;;',
  '  */*) [ -f "$cmd" ] && [ -x "$cmd" ] && found=1 ;;',
  '  *) command -v "$cmd" >/dev/null 2>&1 && found=1 ;;',
  'esac',
  '[ -n "$found" ] || {',
  `  printf '${NOT_FOUND_MARK} %s was not found or is not executable, looked up where the copy-on-write layers are mounted; the command was not run\\n' "$cmd" >&2`,
  `  exit ${NOT_FOUND_STATUS}`,
  '}',
  'exec "$@"',
].join('\n');

/**
 * The argv prefix that makes `mounts`, checks that `command` (the run's argv[0], '' for none to
 * check) is there, and then execs what follows it (nothing when there are no mounts).
 */
export function mountArgv(mounts: readonly RunMount[], command = ''): string[] {
  if (mounts.length === 0) return [];
  return ['sh', '-c', SCRIPT, 'warren-mount', ...mounts.flatMap((m) => [m.fsType, m.options, m.target]), '--', command];
}

/** Why a run ended before its command started, in the mount step's own words from the log; null otherwise. */
export function mountFailureReason(exitCode: number | null, logTail: string): string | null {
  const mark = exitCode === MOUNT_FAILED_STATUS ? MARK : exitCode === NOT_FOUND_STATUS ? NOT_FOUND_MARK : null;
  if (mark === null) return null;
  const line = logTail.split('\n').findLast((l) => l.startsWith(mark) && l.endsWith('the command was not run'));
  return line === undefined ? null : line.slice('warren: '.length);
}
