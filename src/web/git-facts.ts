import { git } from '../git/exec.js';
import { revParse, statusOf, type Repository } from '../git/repo.js';
import type { Task } from '../state/types.js';

/** What the dashboard reads from git about one task; read-only, never takes a lock. */

/** The base as a commit: the local branch when it exists, otherwise whatever `base` names. */
export async function baseTip(repo: Repository, base: string): Promise<string | null> {
  return (await revParse(repo, `refs/heads/${base}`)) ?? (await revParse(repo, base));
}

/** Commits the branch is behind and ahead of its base commit, or null when either side is gone. */
export async function drift(repo: Repository, task: Task, base: string | null): Promise<{ behind: number; ahead: number } | null> {
  if (!base) return null;
  // One git process: fails (and so reads as unknown) when the branch is gone.
  const result = await git(['rev-list', '--left-right', '--count', `${base}...refs/heads/${task.branch}`, '--'], { cwd: repo.root, allowFailure: true });
  if (result.exitCode !== 0) return null;
  const [behind, ahead] = result.stdout.trim().split(/\s+/).map(Number);
  return { behind: behind ?? 0, ahead: ahead ?? 0 };
}

/** Tracked (and untracked, not ignored) changes in the workspace, or null when it cannot be read. */
export async function changeCount(task: Task): Promise<number | null> {
  try {
    return (await statusOf(task.path)).length;
  } catch {
    return null;
  }
}

export const DIFF_LIMIT_BYTES = 512 * 1024;

export interface TaskDiff {
  base: string;
  branch: string;
  /** `git diff --numstat` per file; binary files have null counts. */
  files: { path: string; added: number | null; deleted: number | null }[];
  patch: string;
  truncated: boolean;
}

/** `git diff base...branch`: what the branch changed since it left the base, as committed. */
export async function diffAgainstBase(repo: Repository, task: Task): Promise<TaskDiff | null> {
  const base = await baseTip(repo, task.base);
  const branch = await revParse(repo, `refs/heads/${task.branch}`);
  if (!base || !branch) return null;
  const range = `${base}...${branch}`;
  const numstat = await git(['diff', '--numstat', '-z', '--no-color', '--no-ext-diff', range, '--'], { cwd: repo.root });
  const patch = await git(['diff', '--no-color', '--no-ext-diff', '--find-renames', range, '--'], { cwd: repo.root });
  const text = patch.stdoutBuffer.length > DIFF_LIMIT_BYTES ? patch.stdoutBuffer.subarray(0, DIFF_LIMIT_BYTES).toString('utf8') : patch.stdout;
  return { base: task.base, branch: task.branch, files: parseNumstatZ(numstat.stdout), patch: text, truncated: patch.stdoutBuffer.length > DIFF_LIMIT_BYTES };
}

/**
 * Pure: parses `git diff --numstat -z`. A plain entry is `added\tdeleted\tpath\0`; a rename is
 * `added\tdeleted\t\0old\0new\0`. Binary files show `-` counts.
 */
export function parseNumstatZ(out: string): TaskDiff['files'] {
  const parts = out.split('\0');
  const files: TaskDiff['files'] = [];
  const count = (s: string | undefined): number | null => (s === undefined || s === '-' ? null : Number(s));
  for (let i = 0; i < parts.length; i++) {
    const head = parts[i];
    if (!head) continue;
    const [added, deleted, ...rest] = head.split('\t');
    const name = rest.join('\t');
    if (name !== '') {
      files.push({ path: name, added: count(added), deleted: count(deleted) });
    } else {
      const from = parts[i + 1] ?? '';
      const to = parts[i + 2] ?? '';
      files.push({ path: `${from} → ${to}`, added: count(added), deleted: count(deleted) });
      i += 2;
    }
  }
  return files;
}
