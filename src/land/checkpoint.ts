import { WarrenError } from '../errors.js';
import { git, gitError } from '../git/exec.js';
import { splitZ } from '../git/parse.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { withTaskLock } from '../workspace/locks.js';
import { checkHooks } from './fingerprint.js';
import { recordDrift } from './record.js';
import { excludePathspecs, isProvisioned, provisionedPaths } from './provisioned.js';
import { assertOnBranch, loadTask } from './task.js';
import { gitRetrying } from '../git/repo.js';

export interface CheckpointOptions {
  message?: string;
  acceptHooks?: boolean;
}

export interface CheckpointResult {
  /** The new commit, or null when there was nothing to commit. */
  commit: string | null;
  /** The branch tip after the call. */
  head: string;
  branch: string;
  /** Set when nothing was committed. */
  nothingToCommit: boolean;
  /** Provisioned paths someone had staged by hand, taken back out of the index. */
  unstaged: string[];
  /** Shared-git changes that were not refused (also recorded as events). */
  warnings: string[];
}

/**
 * `warren checkpoint ID`: everything in the workspace, committed on its branch, except warren's
 * own provisioned paths. Runs in the workspace's own index; commits in different worktrees do
 * not share a lock, so checkpoints of different tasks run in parallel.
 */
export async function checkpointTask(ctx: ProjectContext, rawId: string, options: CheckpointOptions = {}): Promise<CheckpointResult> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `checkpoint ${id}`, async () => {
    const task = loadTask(ctx, id);
    await assertOnBranch(task);
    const { current, drift } = await checkHooks(task, ctx.repo.commonDir, options.acceptHooks === true, 'the checkpoint');
    const provisioned = provisionedPaths(ctx, task);

    // Only paths git would otherwise stage need an exclude: naming an ignored path in a pathspec
    // makes `git add` fail ("paths are ignored") after it has staged the rest.
    await gitRetrying(['add', '-A', '--', '.', ...excludePathspecs(await notIgnored(task.path, provisioned))], task.path);
    // A provisioned path staged earlier by hand (`git add -f node_modules`) is taken back out.
    const staged = splitZ((await git(['diff', '--cached', '--name-only', '-z', '--no-renames'], { cwd: task.path })).stdout);
    const unstaged = provisioned.filter((p) => staged.some((s) => isProvisioned(s, [p])));
    if (unstaged.length > 0) {
      // reset, not rm --cached: a provisioned path that is also tracked goes back to HEAD's version.
      await gitRetrying(['reset', '-q', 'HEAD', '--', ...unstaged.map((p) => `:(literal)${p}`)], task.path);
      ctx.store.addEvent({
        project: ctx.key,
        taskId: id,
        kind: 'checkpoint.unstaged_provisioned',
        level: 'warn',
        message: `took provisioned path(s) ${unstaged.join(', ')} out of the index; warren's own paths are never committed`,
        data: { paths: unstaged },
      });
    }
    const warnings = recordDrift(ctx, task, 'checkpoint', current, drift, options.acceptHooks === true);

    const pending = await git(['diff', '--cached', '--quiet'], { cwd: task.path, allowFailure: true });
    const head = async (): Promise<string> => (await git(['rev-parse', 'HEAD'], { cwd: task.path })).stdout.trim();
    if (pending.exitCode === 0) {
      const tip = await head();
      ctx.store.addEvent({ project: ctx.key, taskId: id, kind: 'checkpoint.nothing', message: `nothing to commit; ${task.branch} stays at ${tip.slice(0, 12)}`, data: { head: tip } });
      return { commit: null, head: tip, branch: task.branch, nothingToCommit: true, unstaged, warnings };
    }
    const message = options.message?.trim() || `checkpoint: ${id} ${new Date().toISOString()}`;
    const result = await git(['commit', '-q', '-F', '-'], { cwd: task.path, input: message, allowFailure: true });
    if (result.exitCode !== 0) {
      throw new WarrenError('COMMAND_FAILED', `git commit in ${task.path} failed (a hook may have refused it): ${result.stderr.trim() || `exit ${result.exitCode}`}. The changes are staged in the workspace; no file was lost.`, {
        hint: 'Fix what the hook or git reports, then run `warren checkpoint` again.',
        details: { stderr: result.stderr },
      });
    }
    const commit = await head();
    ctx.store.addEvent({ project: ctx.key, taskId: id, kind: 'checkpoint', message: `committed ${commit.slice(0, 12)} on ${task.branch}: ${message.split('\n')[0] ?? ''}`, data: { commit } });
    return { commit, head: commit, branch: task.branch, nothingToCommit: false, unstaged, warnings };
  });
}

/** The paths among `paths` that git does not ignore in `cwd` (e.g. a `share` symlink under a `dir/` pattern). */
async function notIgnored(cwd: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const result = await git(['check-ignore', '-z', '--stdin'], { cwd, input: paths.join('\0') + '\0', allowFailure: true });
  // Exit 1 means none is ignored; anything above 1 is an error.
  if (result.exitCode > 1) throw gitError(result);
  const ignored = new Set(splitZ(result.stdout));
  return paths.filter((p) => !ignored.has(p));
}
