import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { commitsNotOn, commitsTouching, mergeBase } from '../git/history.js';
import { revParse, revParseMany, treeOf } from '../git/refs.js';
import { checkIgnored, statusOf } from '../git/status.js';
import { changedNames, commitTree, touchedPaths } from '../git/trees.js';
import { listWorktrees } from '../git/worktrees.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { checkHooks, type Drift, type Fingerprint } from './fingerprint.js';
import { landingPolicy } from './policy.js';
import { classifyExclusions, type Exclusion, type ProtectedPolicy } from '../config/protected.js';
import { isProvisioned, provisionedPaths } from './provisioned.js';
import { settingsChange } from './settings-change.js';
import { conflictError, rebaseSquash, squashTree } from './squash.js';
import { configuredHooksPath, pinned } from '../workspace/pinned.js';

export interface LandPlanOptions {
  message?: string;
  acceptHooks?: boolean;
  /** Build the squash but keep the base where it is (`--branch-only`). */
  branchOnly?: boolean;
  /**
   * Squash onto this commit instead of the base's tip: the merge queue integrates several tasks
   * one after another on top of the base. The checkout is not checked here (the queue checks it
   * when it moves the base).
   */
  onto?: string;
  /** The tree of `onto`, when the caller knows it (the merge queue: the previous squash in its chain). */
  ontoTree?: string;
  /** What the merge queue read once for all the entries of a batch (batchFacts), instead of once for each. */
  batch?: BatchFacts;
}

/**
 * The facts every entry of a merge-queue batch shares, read fresh when the batch is integrated:
 * the base's tip, the protected policy committed there, and the main worktree's hooks directory
 * (when it is the common one, no entry's fingerprint needs git).
 */
export interface BatchFacts {
  base: string;
  baseTip: string;
  policy: ProtectedPolicy;
  /** core.hooksPath as configured, read once for the batch. */
  hooksPath: string | null;
}

export async function batchFacts(ctx: ProjectContext, base: string): Promise<BatchFacts | null> {
  const baseTip = await revParse(ctx.repo, `refs/heads/${base}`);
  if (!baseTip) return null;
  const [policy, hooksPath] = await Promise.all([landingPolicy(ctx, base, baseTip), configuredHooksPath(ctx)]);
  return { base, baseTip, policy, hooksPath };
}

/** Everything a land needs, read and checked before the first mutation. Only objects were written. */
export interface LandPlan {
  task: Task;
  baseRef: string;
  baseTip: string;
  taskTip: string;
  forkPoint: string;
  exclusions: Exclusion[];
  /** The squash: one commit on top of baseTip. */
  commit: string;
  tree: string;
  rebased: boolean;
  message: string;
  /** The worktree that has the base checked out, when one does. */
  checkout: string | null;
  /** Paths the landed commit changes relative to the base tip. */
  changed: string[];
  fingerprint: { current: Fingerprint; drift: Drift | null };
  /** warren.yaml's security settings the land changes, as `key: before → after` (flagged, then needing trust). */
  settingsChanged: string[];
}

export async function planLand(ctx: ProjectContext, task: Task, options: LandPlanOptions): Promise<LandPlan> {
  const known = options.batch?.base === task.base ? options.batch : undefined;
  const wt = await pinned(ctx, task.path);
  const fingerprint = await checkHooks(
    task,
    wt,
    known ? known.hooksPath : await configuredHooksPath(ctx),
    options.acceptHooks === true,
    'the land',
  );
  const baseRef = `refs/heads/${task.base}`;
  const taskRef = `refs/heads/${task.branch}`;
  // Both tips read together (one git call), the base's refusal first as before.
  const [realTip, taskTip] = known
    ? [known.baseTip, await revParse(ctx.repo, taskRef)]
    : await revParseMany(ctx.repo, [baseRef, taskRef]);
  if (!realTip) {
    throw new WarrenError(
      'BASE_UNKNOWN',
      `task ${task.id}'s base ${task.base} is not a branch (any more); there is nothing to fast-forward. Nothing was changed.`,
      {
        hint: `Land by hand, or push the task for review with \`warren land ${task.id} --branch-only --push\`.`,
      },
    );
  }
  const policy = known ? known.policy : await landingPolicy(ctx, task.base, realTip);
  const baseTip = options.onto ?? realTip;
  if (!taskTip)
    throw new WarrenError('TASK_STATE', `task ${task.id}'s branch ${task.branch} is missing; nothing was changed.`, {
      hint: 'See `warren scan`.',
    });

  const provisioned = provisionedPaths(ctx, task);
  // The queue lands the branch as committed; work the agent goes on with after joining stays in
  // the workspace (the guard ran when the task joined).
  const dirty =
    options.onto === undefined ? (await statusOf(wt)).filter((e) => !isProvisioned(e.path, provisioned)) : [];
  if (dirty.length > 0) {
    throw new WarrenError(
      'WORKSPACE_DIRTY',
      `task ${task.id} has ${dirty.length} uncommitted change(s) (${dirty
        .slice(0, 10)
        .map((e) => e.path)
        .join(', ')}); land takes committed work only. Nothing was changed.`,
      {
        hint: `Run \`warren checkpoint ${task.id}\` first (or discard the changes), then land again.`,
        details: { changes: dirty },
      },
    );
  }

  const forkPoint = await mergeBase(ctx.repo, baseTip, taskTip);
  if (forkPoint === null) {
    throw new WarrenError('BASE_DIVERGED', `${task.branch} and ${task.base} share no history; nothing was changed.`, {
      hint: 'Inspect both branches by hand.',
    });
  }
  const touched = await touchedPaths(ctx.repo, forkPoint, taskTip);
  const exclusions = classifyExclusions(touched, policy, (p) => isProvisioned(p, provisioned));
  const squashed = await squashTree(ctx.repo, taskTip, forkPoint, exclusions, ctx.store.home);
  let tree = squashed;
  const rebased = forkPoint !== baseTip;
  if (rebased) {
    const merged = await rebaseSquash(ctx.repo, forkPoint, squashed, baseTip);
    if (!merged.ok) {
      const landers = await commitsTouching(ctx.repo, forkPoint, baseTip, merged.conflicts);
      throw conflictError(task.id, task.base, merged.conflicts, landers, options.onto !== undefined);
    }
    tree = merged.tree;
  }
  if (!options.branchOnly && tree === (options.ontoTree ?? (await treeOf(ctx.repo, baseTip))))
    throw nothingToLand(task, taskTip, exclusions);
  const subjects = (await commitsNotOn(ctx.repo, taskTip, [forkPoint])).map((c) => c.subject).reverse();
  const message = landMessage(task, subjects, exclusions, options.message);
  const commit = await commitTree(ctx.repo, tree, baseTip, message);
  const settingsChanged = await settingsChange(
    ctx.repo,
    touched.map((t) => t.path),
    baseTip,
    commit,
  );

  let checkout: string | null = null;
  let changed: string[] = [];
  if (!options.branchOnly && options.onto === undefined) {
    checkout = (await listWorktrees(ctx.repo)).find((wt) => wt.branch === baseRef && !wt.bare)?.path ?? null;
    changed = await changedNames(ctx.repo, baseTip, commit);
    if (checkout) await assertCheckoutCanFollow(checkout, task, changed);
  }
  return {
    task,
    baseRef,
    baseTip,
    taskTip,
    forkPoint,
    exclusions,
    commit,
    tree,
    rebased,
    message,
    checkout,
    changed,
    fingerprint,
    settingsChanged,
  };
}

/** The checkout of the base will be fast-forwarded; its uncommitted changes to those paths would be overwritten. */
export async function assertCheckoutCanFollow(
  checkout: string,
  task: Pick<Task, 'id' | 'base'>,
  changed: readonly string[],
): Promise<void> {
  const touchedSet = new Set(changed);
  const inTheWay = (await statusOf(checkout)).filter(
    (e) => touchedSet.has(e.path) || (e.from !== undefined && touchedSet.has(e.from)),
  );
  if (inTheWay.length === 0) {
    const ignored = await ignoredInTheWay(checkout, changed);
    if (ignored.length === 0) return;
    throw new WarrenError(
      'CHECKOUT_DIRTY',
      `${checkout} has ${task.base} checked out with ignored ${ignored.map((p) => p).join(', ')} where landing task ${task.id} would write tracked files: git would replace ${ignored.length === 1 ? 'it' : 'them'} without a word. Nothing was changed.`,
      {
        hint: `Move ${ignored.length === 1 ? 'it' : 'them'} out of the way in ${checkout} (or rename the task's files), then land again.`,
        details: { paths: ignored, ignored: true },
      },
    );
  }
  throw new WarrenError(
    'CHECKOUT_DIRTY',
    `${checkout} has ${task.base} checked out with uncommitted changes to ${inTheWay.map((e) => e.path).join(', ')}, which landing task ${task.id} would overwrite. Nothing was changed.`,
    {
      hint: `Commit or stash those changes in ${checkout}, then land again.`,
      details: { paths: inTheWay.map((e) => e.path) },
    },
  );
}

/**
 * The ignored files and folders of `checkout` that following `changed` would replace: a changed
 * path that is there on disk though git does not track it (an ignored `.env` the task added as a
 * tracked file; an ignored `data/` folder where the task adds a file `data`), and a file or link
 * where a changed path needs a folder. `git read-tree -u` replaces ignored paths silently.
 */
async function ignoredInTheWay(checkout: string, changed: readonly string[]): Promise<string[]> {
  const there = new Set<string>();
  for (const rel of changed) {
    if (lstatOrNull(path.join(checkout, rel))) there.add(rel);
    for (let dir = path.posix.dirname(rel); dir !== '.'; dir = path.posix.dirname(dir)) {
      const st = lstatOrNull(path.join(checkout, dir));
      if (st && !st.isDirectory()) there.add(dir);
    }
  }
  return [...(await checkIgnored(checkout, [...there]))].sort();
}

/** lstat, or null where nothing is (ENOENT, or ENOTDIR: a file where a folder of the path would be). */
function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** The subject `warren checkpoint` gives a commit when it is given no message: it says nothing about the work. */
export function isGeneratedCheckpointSubject(subject: string, id: string): boolean {
  return (
    subject.startsWith(`checkpoint: ${id} `) &&
    /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(subject.slice(`checkpoint: ${id} `.length))
  );
}

/**
 * The landed commit's message. Its subject is `land -m` (its first line; further lines open the
 * body), else the subject of the branch's first commit that warren did not title
 * itself (a `checkpoint` without `-m`), else `TYPE: ID`. The body lists the squashed commits and what was left out; the `Warren-Task: ID`
 * trailer always ends it, so the task is found from the commit whatever its subject.
 */
export function landMessage(
  task: Pick<Task, 'id' | 'type' | 'branch'>,
  subjects: readonly string[],
  exclusions: readonly Exclusion[],
  given?: string,
): string {
  const [givenSubject = '', ...givenBody] = (given ?? '').trim().split('\n');
  const first = subjects.find((s) => s.trim() !== '' && !isGeneratedCheckpointSubject(s, task.id));
  const subject = givenSubject.trim() || first?.trim() || `${task.type}: ${task.id}`;
  const lines = [subject, ''];
  const body = givenBody.join('\n').trim();
  if (body !== '') lines.push(body, '');
  lines.push(`Squashed from ${task.branch} (${subjects.length} commit${subjects.length === 1 ? '' : 's'}):`);
  for (const s of subjects) lines.push(`- ${s}`);
  if (exclusions.length > 0) {
    lines.push('', 'Left out (they never land):');
    for (const e of exclusions) lines.push(`- ${e.path} (${e.why}, ${e.how})`);
  }
  lines.push('', `Warren-Task: ${task.id}`);
  return lines.join('\n') + '\n';
}

/** The base already has it all: said as "already landed" when that is why, so the hint does not send the user to commit. */
function nothingToLand(task: Task, taskTip: string, exclusions: readonly Exclusion[]): WarrenError {
  const details = { excluded: exclusions.map((e) => e.path) };
  const landed = task.data.landed;
  if (landed) {
    const since = landed.taskCommit === taskTip ? 'no commit since' : 'nothing new since';
    return new WarrenError(
      'NOTHING_TO_LAND',
      `task ${task.id} is already landed on ${landed.base} (as ${landed.commit.slice(0, 12)}) and has ${since}; nothing to land, nothing was changed.`,
      {
        hint: `Remove it with \`warren rm ${task.id}\` (the branch is kept), or commit more work with \`warren checkpoint ${task.id}\` and land again.`,
        details: { ...details, landed: landed.commit },
      },
    );
  }
  return new WarrenError(
    'NOTHING_TO_LAND',
    `task ${task.id} has nothing that ${task.base} lacks${exclusions.length ? ` once protected and provisioned paths (${exclusions.map((e) => e.path).join(', ')}) are left out` : ''}; nothing was changed.`,
    {
      hint: `Commit work with \`warren checkpoint ${task.id}\` first.`,
      details,
    },
  );
}
