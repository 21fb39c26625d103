import { WarrenError } from '../errors.js';
import { moveCheckout, settleInterruptedMove } from '../git/index-ops.js';
import { compareAndSwapRef, revParse } from '../git/refs.js';
import type { Direction, Schema, Scope, Step } from '../workspace/operation.js';

/**
 * The one mutation of a land (the merge queue's advance, advance.ts): the main checkout of the base
 * follows to the new commit (read-tree -m -u refuses before writing anything if local changes
 * would be overwritten), then the base ref moves by compare-and-swap. Both run under the
 * repository lock. Killed between the two, the checkout shows the new files as staged changes
 * while the base is where it was: it is put back. Killed inside the move, git may have written
 * some files and not the index: those files are put back (src/git/index-ops.ts). Once the ref
 * had moved, the land happened, and is recorded.
 */

/** What the operation's payload holds about the move. */
export interface BaseMove {
  baseRef: string;
  from: string;
  to: string;
  /** The worktree that has the base checked out (the main checkout, usually), or null. */
  checkout: string | null;
}

export const baseMoveShape = (z: Schema) => ({
  baseRef: z.string(),
  from: z.string(),
  to: z.string(),
  checkout: z.string().nullable(),
});

/** The base moved between the plan and the move: nothing was changed, and the caller plans again. */
export class BaseMoved extends WarrenError {
  constructor(baseRef: string) {
    super('BASE_DIVERGED', `${baseRef} moved while it was being advanced; nothing was landed.`);
  }
}

/** Has the ref reached the new commit? Then the land happened: forward. Else back. */
async function movedYet({ ctx, data }: Scope<BaseMove>): Promise<Direction> {
  return (await revParse(ctx.repo, data.baseRef)) === data.to ? 'forward' : 'back';
}

/** The checkout of the base, brought forward. Undone: put back to wherever the base is now. */
export function checkoutMoved<D extends BaseMove, L>(base: (d: D) => string): Step<'checkout-moved', D, L> {
  return {
    name: 'checkout-moved',
    async run({ data }) {
      if (!data.checkout) return;
      const ff = await moveCheckout(data.checkout, data.from, data.to);
      if (ff.exitCode !== 0) {
        throw new WarrenError(
          'CHECKOUT_DIRTY',
          `could not bring ${data.checkout} (which has ${base(data)} checked out) forward: ${ff.stderr.trim()}. Nothing was changed.`,
          { hint: `Commit or stash the changes in ${data.checkout}, then land again.` },
        );
      }
    },
    async undo({ ctx, data, finished, live }) {
      if (!data.checkout) return;
      if (!finished) {
        // Refused by git (this run, alive): git writes nothing before it refuses.
        if (live !== null) return;
        // Killed inside the move: git writes the files, then the index. Where it got to decides.
        const got = await settleInterruptedMove(data.checkout, data.from, data.to);
        if (got.got === 'files') {
          return got.putBack.length > 0
            ? `${got.putBack.length} file(s) the interrupted move had written in ${data.checkout} were put back (${got.putBack.slice(0, 5).join(', ')}${got.putBack.length > 5 ? ', …' : ''})`
            : undefined;
        }
      }
      const now = (await revParse(ctx.repo, data.baseRef)) ?? data.from;
      const back = await moveCheckout(data.checkout, data.to, now);
      if (back.exitCode !== 0) {
        throw new WarrenError(
          'CHECKOUT_DIRTY',
          `${base(data)} did not move to ${data.to.slice(0, 12)}, so nothing was landed, but ${data.checkout} could not be put back to ${now.slice(0, 12)}: ${back.stderr.trim()}. Its index and files now hold ${data.to.slice(0, 12)} while ${base(data)} does not; the task branches are untouched.`,
          {
            hint: `In ${data.checkout}, run \`git read-tree -m -u ${data.to.slice(0, 12)} HEAD\` (or \`git reset --keep HEAD\`) to return it to ${base(data)}, then land again. Do not commit what it shows as staged.`,
            details: { checkout: data.checkout, commit: data.to, base: now },
          },
        );
      }
      return `${data.checkout} was put back to ${base(data)}`;
    },
    recover: { decide: movedYet },
  };
}

/** The base ref, moved by compare-and-swap: one that moved meanwhile is refused (BaseMoved), with nothing changed. */
export function refMoved<D extends BaseMove, L>(reason: (d: D) => string): Step<'ref-moved', D, L> {
  return {
    name: 'ref-moved',
    async run({ ctx, data }) {
      if (!(await compareAndSwapRef(ctx.repo, data.baseRef, data.to, data.from, reason(data))))
        throw new BaseMoved(data.baseRef);
    },
    recover: { decide: movedYet },
  };
}
