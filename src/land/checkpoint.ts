import { WarrenError } from '../errors.js';
import {
  commitStaged,
  hasStagedChanges,
  headOf,
  stageAll,
  stagedNames,
  unstage,
  unstageAll,
} from '../git/index-ops.js';
import { checkIgnored } from '../git/status.js';
import type { ProjectContext } from '../workspace/context.js';
import { validateTaskId } from '../workspace/ids.js';
import { beginIntent, type RecoverFn } from '../workspace/intents.js';
import { withTaskLock } from '../workspace/locks.js';
import { checkHooks } from './fingerprint.js';
import { recordDrift } from './record.js';
import { excludePathspecs, isProvisioned, provisionedPaths } from './provisioned.js';
import { assertWorkspaceState } from '../workspace/ownership.js';
import { loadTask } from './task.js';

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
export async function checkpointTask(
  ctx: ProjectContext,
  rawId: string,
  options: CheckpointOptions = {},
): Promise<CheckpointResult> {
  const id = validateTaskId(rawId);
  return withTaskLock(ctx, id, `checkpoint ${id}`, async () => {
    const task = loadTask(ctx, id);
    // On its branch, nothing half done — except a merge: this commit concludes it (the documented
    // way to bring the base in after a conflict).
    await assertWorkspaceState(ctx.repo, task, { allow: ['merge'] });
    const { current, drift } = await checkHooks(
      task,
      ctx.repo.commonDir,
      options.acceptHooks === true,
      'the checkpoint',
    );
    const provisioned = provisionedPaths(ctx, task);

    // Only paths git would otherwise stage need an exclude: naming an ignored path in a pathspec
    // makes `git add` fail ("paths are ignored") after it has staged the rest.
    const excluded = excludePathspecs(await notIgnored(task.path, provisioned));
    // The index changes from here: a warren killed half way is repaired by the next command.
    const intent = beginIntent(ctx, 'checkpoint', id, { id, path: task.path, branch: task.branch });
    await stageAll(task.path, excluded);
    // A provisioned path staged earlier by hand (`git add -f node_modules`) is taken back out.
    const staged = await stagedNames(task.path);
    const unstaged = provisioned.filter((p) => staged.some((s) => isProvisioned(s, [p])));
    if (unstaged.length > 0) {
      // reset, not rm --cached: a provisioned path that is also tracked goes back to HEAD's version.
      await unstage(task.path, unstaged);
      ctx.store.addEvent({
        project: ctx.key,
        taskId: id,
        kind: 'checkpoint.unstaged_provisioned',
        level: 'warn',
        message: `took provisioned path(s) ${unstaged.join(', ')} out of the index; warren's own paths are never committed`,
        data: { paths: unstaged },
      });
    }
    intent.step('staged');
    const warnings = recordDrift(ctx, task, 'checkpoint', current, drift, options.acceptHooks === true);

    if (!(await hasStagedChanges(task.path))) {
      const tip = await headOf(task.path);
      ctx.store.addEvent({
        project: ctx.key,
        taskId: id,
        kind: 'checkpoint.nothing',
        message: `nothing to commit; ${task.branch} stays at ${tip.slice(0, 12)}`,
        data: { head: tip },
      });
      intent.done();
      return { commit: null, head: tip, branch: task.branch, nothingToCommit: true, unstaged, warnings };
    }
    const message = options.message?.trim() || `checkpoint: ${id} ${new Date().toISOString()}`;
    const result = await commitStaged(task.path, message);
    if (result.exitCode !== 0) {
      intent.done(); // the changes stay staged, as said: a state of its own, nothing to repair
      throw new WarrenError(
        'COMMAND_FAILED',
        `git commit in ${task.path} failed (a hook may have refused it): ${result.stderr.trim() || `exit ${result.exitCode}`}. The changes are staged in the workspace; no file was lost.`,
        {
          hint: 'Fix what the hook or git reports, then run `warren checkpoint` again.',
          details: { stderr: result.stderr },
        },
      );
    }
    const commit = await headOf(task.path);
    intent.step('committed');
    ctx.store.addEvent({
      project: ctx.key,
      taskId: id,
      kind: 'checkpoint',
      message: `committed ${commit.slice(0, 12)} on ${task.branch}: ${message.split('\n')[0] ?? ''}`,
      data: { commit },
    });
    intent.done();
    return { commit, head: commit, branch: task.branch, nothingToCommit: false, unstaged, warnings };
  });
}

/** The paths among `paths` that git does not ignore in `cwd` (e.g. a `share` symlink under a `dir/` pattern). */
async function notIgnored(cwd: string, paths: readonly string[]): Promise<string[]> {
  const ignored = await checkIgnored(cwd, paths);
  return paths.filter((p) => !ignored.has(p));
}

/**
 * A checkpoint whose warren died. Staged but not committed: the index goes back to HEAD (the
 * files are untouched, so nothing is lost) and `checkpoint` can run again. Committed: the
 * commit is on the branch; only its event was missing.
 */
export const recoverCheckpoint: RecoverFn = async (ctx, intent) => {
  const d = intent.data as { id: string; path: string; branch: string };
  if (intent.step === 'begun') return { outcome: 'nothing-to-do', message: 'it had changed nothing' };
  if (intent.step === 'staged') {
    await unstageAll(d.path);
    return {
      outcome: 'rolled-back',
      message: `what it had staged in ${d.path} was unstaged (every file is as it was); \`warren checkpoint ${d.id}\` can run again`,
    };
  }
  const commit = await headOf(d.path);
  ctx.store.addEvent({
    project: ctx.key,
    taskId: d.id,
    kind: 'checkpoint',
    message: `committed ${commit.slice(0, 12)} on ${d.branch} (recorded after an interrupted checkpoint)`,
    data: { commit },
  });
  return { outcome: 'rolled-forward', message: `the commit ${commit.slice(0, 12)} is on ${d.branch}` };
};
