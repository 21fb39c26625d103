import { WarrenError } from '../errors.js';
import { isAncestor } from '../git/history.js';
import { fastForward } from '../git/index-ops.js';
import { compareAndSwapRef, revParse, type Upstream } from '../git/refs.js';
import { fetchBranch } from '../git/remote.js';
import { listWorktrees } from '../git/worktrees.js';
import type { ProjectContext } from './context.js';
import { withRepoLock } from './locks.js';

export type SyncOutcome =
  | { kind: 'no-upstream' }
  | { kind: 'up-to-date'; upstream: string; commit: string }
  | { kind: 'ahead'; upstream: string; commit: string }
  | {
      kind: 'fast-forwarded';
      upstream: string;
      from: string;
      to: string;
      how: 'merge --ff-only' | 'update-ref';
      checkout: string | null;
    };

/**
 * Brings the local base up to its upstream before a task branches from it: fetch that one
 * branch, then fast-forward (in the worktree that has it checked out, or by compare-and-swap
 * on the ref). A diverged base is refused before anything is created.
 */
export async function syncBase(
  ctx: ProjectContext,
  base: string,
  { remote, remoteRef, trackingRef }: Upstream,
): Promise<SyncOutcome> {
  return withRepoLock(ctx, `sync ${base}`, async () => {
    await fetchBranch(ctx.repo, remote, remoteRef, trackingRef);
    const local = await revParse(ctx.repo, `refs/heads/${base}`);
    const upstream = await revParse(ctx.repo, trackingRef);
    if (!local || !upstream)
      throw new WarrenError(
        'BASE_UNKNOWN',
        `could not resolve ${base} or ${trackingRef} after fetching; nothing was created.`,
      );
    if (local === upstream) return { kind: 'up-to-date', upstream: trackingRef, commit: local };
    if (await isAncestor(ctx.repo, upstream, local)) return { kind: 'ahead', upstream: trackingRef, commit: local };
    if (!(await isAncestor(ctx.repo, local, upstream))) {
      throw new WarrenError(
        'BASE_DIVERGED',
        `the base ${base} (${local.slice(0, 12)}) has diverged from ${trackingRef} (${upstream.slice(0, 12)}): each has commits the other lacks. Nothing was created; ${base} was left as it was.`,
        {
          hint: `Reconcile ${base} with ${trackingRef} (rebase or merge), or run warren new with --no-sync to branch from the local ${base} as it is.`,
          details: { base, local, upstream: trackingRef, upstreamCommit: upstream },
        },
      );
    }
    const checkedOut = (await listWorktrees(ctx.repo)).find((wt) => wt.branch === `refs/heads/${base}`);
    if (checkedOut) {
      const merge = await fastForward(checkedOut.path, upstream);
      if (merge.exitCode !== 0) {
        throw new WarrenError(
          'CHECKOUT_DIRTY',
          `could not fast-forward ${base} in ${checkedOut.path}: ${merge.stderr.trim().split('\n')[0] ?? ''}. Nothing was created; ${base} was left as it was.`,
          {
            hint: `Commit or stash the changes in ${checkedOut.path}, or use --no-sync.`,
            details: { argv: merge.argv, stderr: merge.stderr },
          },
        );
      }
      return {
        kind: 'fast-forwarded',
        upstream: trackingRef,
        from: local,
        to: upstream,
        how: 'merge --ff-only',
        checkout: checkedOut.path,
      };
    }
    if (
      !(await compareAndSwapRef(
        ctx.repo,
        `refs/heads/${base}`,
        upstream,
        local,
        `warren: fast-forward ${base} to ${trackingRef}`,
      ))
    ) {
      throw new WarrenError(
        'BASE_DIVERGED',
        `${base} moved while warren was fast-forwarding it to ${trackingRef}; nothing was created and ${base} keeps its new tip.`,
        {
          hint: 'Run the command again.',
        },
      );
    }
    return {
      kind: 'fast-forwarded',
      upstream: trackingRef,
      from: local,
      to: upstream,
      how: 'update-ref',
      checkout: null,
    };
  });
}

/**
 * Moving the user's base (and the files of the checkout that has it) is never silent: an event
 * at level warn, which `warren new` prints as one line on stderr and lists in its `warnings`.
 */
export function recordFastForward(ctx: ProjectContext, taskId: string, base: string, sync: SyncOutcome): void {
  if (sync.kind !== 'fast-forwarded') return;
  const where = sync.checkout ? `; ${sync.checkout} (which has ${base} checked out) moved with it` : '';
  ctx.store.addEvent({
    project: ctx.key,
    taskId,
    kind: 'base.fast_forwarded',
    level: 'warn',
    message: `fast-forwarded ${base} from ${sync.from.slice(0, 12)} to ${sync.to.slice(0, 12)} (${sync.upstream}) before branching${where}; --no-sync leaves it as it is`,
    data: { base, upstream: sync.upstream, from: sync.from, to: sync.to, how: sync.how, checkout: sync.checkout },
  });
}
