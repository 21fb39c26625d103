import { WarrenError } from '../../errors.js';
import { treeOf } from '../../git/refs.js';
import { dropRef, fetchInto } from '../../git/ssh-transfer.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';
import { gitSshCommand, gitUrl, request } from './connection.js';
import { hostNamed } from './hosts.js';
import { worktreeRef, type RemoteWorktree } from './protocol.js';
import { readRecord } from './remote-records.js';
import { fetchTurn } from './remote-task.js';

/**
 * The workspace of a task on another machine as it is there, uncommitted work included, for
 * `status` and `diff` here: the host makes its files a commit on its HEAD (its index and files
 * untouched), which is fetched here into a ref of its own — no hook, nothing checked out, the
 * task's branch and workspace here unmoved — and read as a tree, then the ref dropped.
 */
export interface HostWorkspace {
  /** The commit the workspace there is on. */
  head: string;
  /** Its files as they are there, as a tree here. */
  tree: string;
  tracked: RemoteWorktree['tracked'];
  /** The ref that held it here dropped (its objects go with git's gc). */
  release(): Promise<void>;
}

const fetchedRef = (id: string): string => `refs/warren/remote-worktree/${id}`;

async function ask(ctx: ProjectContext, task: Task) {
  const record = readRecord(ctx.store.home, ctx.key, task.id);
  if (!record?.repo || !record.created) return null;
  const host = hostNamed(ctx, record.host);
  const there = await request<RemoteWorktree>(ctx.store.home, host, {
    op: 'worktree',
    v: 1,
    project: record.project,
    id: task.id,
  });
  return { host, repo: record.repo, there };
}

/**
 * `warren status` of the task's workspace on its host — `git status` there, and the paths the
 * host provisioned — or null for a task here (or one not made there yet).
 */
export async function hostChanges(
  ctx: ProjectContext,
  task: Task,
): Promise<Omit<RemoteWorktree, 'head' | 'commit'> | null> {
  const there = (await ask(ctx, task))?.there;
  if (!there) return null;
  const { head: _head, commit: _commit, ...changes } = there;
  return changes;
}

/** The workspace there of a task on a host; null for a task here (or one not made there yet). */
export async function hostWorkspace(ctx: ProjectContext, task: Task): Promise<HostWorkspace | null> {
  // Its turn among the task's fetches (remote-task.ts fetchTurn), held until it is released.
  const turn = await fetchTurn(ctx, task.id, 'reading its workspace on its host');
  try {
    const read = await readHostWorkspace(ctx, task, () => turn.release());
    if (read === null) turn.release();
    return read;
  } catch (err) {
    turn.release();
    throw err;
  }
}

async function readHostWorkspace(ctx: ProjectContext, task: Task, done: () => void): Promise<HostWorkspace | null> {
  const home = ctx.store.home;
  const asked = await ask(ctx, task);
  if (asked === null) return null;
  const { host, repo, there } = asked;
  const release = () => dropRef(ctx.repo.root, fetchedRef(task.id)).finally(done);
  if (there.commit === there.head)
    return { head: there.head, tree: await treeOf(ctx.repo, there.head), tracked: there.tracked, release };
  const got = await fetchInto(
    ctx.repo,
    gitUrl(host, repo),
    gitSshCommand(home, host),
    worktreeRef(task.id),
    fetchedRef(task.id),
  );
  if (got !== there.commit) {
    await release();
    throw new WarrenError(
      'REMOTE_FAILED',
      `task ${task.id}'s workspace on host ${host.name} changed while it was read (${(got ?? 'nothing').slice(0, 12)} fetched, ${there.commit.slice(0, 12)} made); nothing was changed.`,
      { hint: 'Run the command again.' },
    );
  }
  return { head: there.head, tree: await treeOf(ctx.repo, got), tracked: there.tracked, release };
}
