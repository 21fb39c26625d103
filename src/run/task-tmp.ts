import fs from 'node:fs';
import path from 'node:path';
import type { Store } from '../state/store.js';
import { removeTree } from '../system/remove-tree.js';
import { logDir } from './records.js';

/**
 * Each task's own temporary folder, `$WARREN_HOME/logs/<project>/<ID>/tmp`, given to every
 * command and agent of the task as TMPDIR (TMP, TEMP): what an agent CLI or a test run writes
 * "in /tmp" (Claude Code's `/tmp/claude-0/…`) stays with the task, is writable in its sandbox,
 * and goes when the task goes — `rm` removes it, `gc` removes a gone task's.
 */
export function taskTmpPath(home: string, project: string, taskId: string): string {
  return path.join(home, 'logs', project, taskId, 'tmp');
}

/** The task's TMPDIR, made (0700) when missing. */
export function taskTmp(store: Store, project: string, taskId: string): string {
  const dir = path.join(logDir(store, project, taskId), 'tmp');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The variables that point a command at it. */
export function tmpEnv(dir: string): Record<string, string> {
  return { TMPDIR: dir, TMP: dir, TEMP: dir };
}

/** Removes the task's TMPDIR (by lstat: never through a link); the paths that would not go. */
export function removeTaskTmp(home: string, project: string, taskId: string): string[] {
  const dir = taskTmpPath(home, project, taskId);
  if (!fs.lstatSync(dir, { throwIfNoEntry: false })) return [];
  return removeTree(dir).map((f) => f.path);
}
