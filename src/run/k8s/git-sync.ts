import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { bundleOf, bundleOfCommit, fetchBundle, firstParent, mirrorTree, pathsBetween } from '../../git/bundle.js';
import { isAncestor } from '../../git/history.js';
import { compareAndSwapRef, revParse, treeOf } from '../../git/refs.js';
import { compilePolicy } from '../../config/protected.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';
import { pinned } from '../../workspace/pinned.js';
import { execCollect } from './cluster.js';
import { POD_WORKSPACE } from './k8s-run.js';
import { writeLedger } from './ledger.js';
import type { TaskClaim } from './task-claim.js';

/**
 * Git in and out of a task's sandbox. The sandbox holds a clone of its own at POD_WORKSPACE; the
 * coordinator's workspace stays the task's record. Before a run, the task's branch goes in as a
 * bundle when it moved (a checkpoint, a sync); after it, what the run left — the sandbox's
 * commits and its files — comes back as a bundle, and is checked here before anything moves:
 * its commits descend from what was sent and touch no protected path; nothing of it runs (no
 * hook: src/git/exec.ts). Then the branch moves to its commits, and the workspace's files
 * become the sandbox's, so `diff`, `checkpoint` and `land` read them as a local task's.
 */

const GIT = 'git -c user.name=warren -c user.email=warren@localhost -c core.hooksPath=/dev/null';

/** In the sandbox: the bundle on stdin fetched, the clone moved to it, its uncommitted work carried over. */
const RECEIVE = `set -e
mkdir -p "$1"; cd "$1"
[ -d .git ] || git init -q
cat > .git/warren-in.bundle
${GIT} fetch -q --no-tags .git/warren-in.bundle "+refs/heads/$2:refs/warren/sent"
rm -f .git/warren-in.bundle
if git rev-parse -q --verify HEAD >/dev/null; then
  stashed=
  if [ -n "$(git status --porcelain --untracked-files=all)" ]; then ${GIT} add -A; ${GIT} stash push -q; stashed=1; fi
  ${GIT} reset -q --hard refs/warren/sent
  [ -z "$stashed" ] || ${GIT} stash pop -q
else
  ${GIT} checkout -q -B "$2" refs/warren/sent
fi`;

/** In the sandbox: its files as a commit over its HEAD, bundled without what was sent; nothing when unchanged. */
const SEND_BACK = `set -e
cd "$1"
export GIT_INDEX_FILE=.git/warren-back-index
cp .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
git add -A
T=$(git write-tree)
rm -f "$GIT_INDEX_FILE"; unset GIT_INDEX_FILE
H=$(git rev-parse HEAD)
if [ "$H" = "$2" ] && [ "$T" = "$3" ]; then exit 0; fi
S=$(${GIT} commit-tree "$T" -p "$H" -m "warren: the sandbox's files")
git update-ref refs/warren/back "$S"
git bundle create -q - refs/warren/back "^$2"`;

/** In the gate's sandbox: the bundle on stdin fetched, the clone checked out (detached) at what it holds. */
const RECEIVE_COMMIT = `set -e
mkdir -p "$1"; cd "$1"
git init -q
cat > .git/warren-in.bundle
${GIT} fetch -q --no-tags .git/warren-in.bundle "+$2:refs/warren/sent"
rm -f .git/warren-in.bundle
${GIT} checkout -q --detach refs/warren/sent`;

/**
 * The merge queue's integrated commit into its gate's sandbox (a fresh one: the whole history
 * goes). Nothing comes back from a gate's sandbox but its steps' output and exit statuses.
 */
export async function sendCommit(ctx: ProjectContext, claim: TaskClaim, commit: string): Promise<void> {
  const ref = `refs/warren/gate/${claim.ledger.task}`;
  const bundle = await bundleOfCommit(ctx.repo, commit, ref);
  const r = await execCollect(claim.cluster, claim.pod, ['sh', '-c', RECEIVE_COMMIT, 'sh', POD_WORKSPACE, ref], bundle);
  if (r.status !== 0) {
    throw new WarrenError(
      'RUNNER_UNAVAILABLE',
      `the integrated commit ${commit.slice(0, 12)} could not be given to the merge queue's sandbox (pod ${claim.pod}): ${r.stderr.trim().split('\n').slice(-2).join(' ') || `exit ${r.status}`}; the gate did not run.`,
      { hint: "The sandbox's image needs sh and git." },
    );
  }
}

/** The task's branch into its sandbox, when it is not there yet. */
export async function sendBranch(ctx: ProjectContext, task: Task, claim: TaskClaim): Promise<void> {
  const head = await revParse(ctx.repo, `refs/heads/${task.branch}`);
  if (head === null)
    throw new WarrenError('TASK_STATE', `task ${task.id}'s branch ${task.branch} is gone; nothing was run.`);
  const { ledger } = claim;
  if (ledger.sentHead === head) return;
  const have = ledger.sentHead !== null && (await isAncestor(ctx.repo, ledger.sentHead, head)) ? [ledger.sentHead] : [];
  const bundle = await bundleOf(ctx.repo, task.branch, have);
  const r = await execCollect(
    claim.cluster,
    claim.pod,
    ['sh', '-c', RECEIVE, 'sh', POD_WORKSPACE, task.branch],
    bundle,
  );
  if (r.status !== 0) {
    throw new WarrenError(
      'RUNNER_UNAVAILABLE',
      `task ${task.id}'s branch could not be given to its sandbox (pod ${claim.pod}): ${r.stderr.trim().split('\n').slice(-2).join(' ') || `exit ${r.status}`}; nothing was run.`,
      { hint: `The sandbox's image needs sh and git. \`warren rm ${task.id}\` deletes the claim.` },
    );
  }
  claim.ledger = { ...ledger, sentHead: head };
  writeLedger(claim.dir, claim.ledger);
}

/**
 * What the run left in the sandbox, brought back and checked (see above); the branch moved and
 * the workspace's files made the sandbox's. Refused (RUNNER_WORK_REFUSED): nothing moves here.
 */
export async function bringBack(ctx: ProjectContext, task: Task, claim: TaskClaim): Promise<void> {
  const sent = claim.ledger.sentHead;
  if (sent === null) return;
  const r = await execCollect(claim.cluster, claim.pod, [
    'sh',
    '-c',
    SEND_BACK,
    'sh',
    POD_WORKSPACE,
    sent,
    claim.ledger.broughtTree ?? '-',
  ]);
  if (r.status !== 0) {
    throw new WarrenError(
      'RUNNER_WORK_REFUSED',
      `task ${task.id}'s work could not be brought back from its sandbox (pod ${claim.pod}): ${r.stderr.trim().split('\n').slice(-2).join(' ') || `exit ${r.status}`}; the task's branch and workspace are as they were.`,
      { hint: `Look in the sandbox with \`warren exec ${task.id} -- git status\`.` },
    );
  }
  if (r.stdout.length === 0) return;
  const file = path.join(claim.dir, 'back.bundle');
  fs.writeFileSync(file, r.stdout, { mode: 0o600 });
  try {
    const snapshot = await fetchBundle(ctx.repo, file, 'refs/warren/back', `refs/warren/k8s/${claim.ledger.claim}`);
    const head = await firstParent(ctx.repo, snapshot);
    await checkBroughtBack(ctx, task, sent, head);
    if (
      head !== sent &&
      !(await compareAndSwapRef(
        ctx.repo,
        `refs/heads/${task.branch}`,
        head,
        sent,
        'warren: brought back from the sandbox',
      ))
    ) {
      throw refused(task, `its branch ${task.branch} moved here while the run went on`);
    }
    const tree = await treeOf(ctx.repo, snapshot);
    await mirrorTree(await pinned(ctx, task.path), tree);
    claim.ledger = { ...claim.ledger, sentHead: head, broughtTree: tree };
    writeLedger(claim.dir, claim.ledger);
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'runner.brought_back',
      message: `task ${task.id}: the sandbox's work brought back (${head === sent ? 'no new commit' : `branch moved to ${head.slice(0, 12)}`}; files ${tree.slice(0, 12)})`,
      data: { cluster: claim.cluster.name, claim: claim.ledger.claim, head, tree, moved: head !== sent },
    });
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The sandbox's commits descend from what was sent and change no protected path. */
async function checkBroughtBack(ctx: ProjectContext, task: Task, sent: string, head: string): Promise<void> {
  if (!(await isAncestor(ctx.repo, sent, head))) {
    throw refused(task, `its commits do not descend from ${sent.slice(0, 12)}, what warren gave it`);
  }
  if (head === sent) return;
  const policy = compilePolicy(ctx.config.protected, 'warren.yaml');
  const touched = (await pathsBetween(ctx.repo, sent, head)).filter((p) => policy.matches(p));
  if (touched.length > 0) {
    throw refused(task, `its commits change protected path(s) ${touched.slice(0, 5).join(', ')}`);
  }
}

function refused(task: Task, why: string): WarrenError {
  return new WarrenError(
    'RUNNER_WORK_REFUSED',
    `task ${task.id}'s work in its sandbox was not brought back: ${why}. The task's branch and workspace are as they were.`,
    {
      hint: `Undo those commits in the sandbox (\`warren exec ${task.id} -- git reset --soft ${task.branch}@{0}\` or similar), then run again.`,
    },
  );
}
