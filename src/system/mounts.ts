import fs from 'node:fs';
import { isInside } from '../util/paths.js';

/**
 * A mount a run needs in its own mount namespace. A copy-on-write layer provisioned by a user
 * who is not root is mounted nowhere on the host: the first process of each run's namespace
 * mounts it before the command starts, and it goes when the run's namespace goes.
 */
export interface RunMount {
  fsType: 'overlay';
  /** The whole `-o` string (layers and flags), built by the feature that owns the mount. */
  options: string;
  /** The layers `options` names: as root in a sandbox they are mounted from idmapped clones (src/system/sandbox-uid.ts). */
  layers: { lower: string; upper: string; work: string };
  /** The absolute path of the directory it is mounted on. */
  target: string;
}

export interface MountEntry {
  mountPoint: string;
  fsType: string;
  source: string;
  options: string;
}

/** `\040` and friends: mountinfo escapes space, tab, newline and backslash in octal. */
function unescapeOctal(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Parses `/proc/<pid>/mountinfo` (see proc(5)). Pure. */
export function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const mountPoint = fields[4];
    const options = fields[5] ?? '';
    const [fsType, source, superOptions] = right.split(' ');
    if (mountPoint === undefined || fsType === undefined) continue;
    entries.push({
      mountPoint: unescapeOctal(mountPoint),
      fsType,
      source: unescapeOctal(source ?? ''),
      options: `${options},${superOptions ?? ''}`,
    });
  }
  return entries;
}

/** The mount table of this process's mount namespace; empty where there is no /proc (macOS). */
export function readMounts(): MountEntry[] {
  try {
    return parseMountInfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  } catch {
    return [];
  }
}

/** Mounts at or below `dir` (canonical). Pure given the table. */
export function mountsUnder(table: readonly MountEntry[], dir: string): MountEntry[] {
  return table.filter((entry) => isInside(dir, entry.mountPoint));
}
