import type { BeforeRunStep, CheckoutStep, GcStep, RemoveStep } from '../workspace/types.js';
import {
  addCowCheckout,
  ensureCheckoutMounted,
  forgetCheckout,
  ownsCheckoutMount,
  releaseCheckout,
  wantsCow,
} from './cow.js';
import { collectCheckoutGarbage } from './collect.js';
import { sandboxKindFor } from '../config/sandbox.js';

/** Copy-on-write checkouts' steps in a workspace's life: make, remove, gc, and before a run. */

export const checkoutCreate: CheckoutStep = {
  name: 'checkout',
  async add(ctx, task) {
    const wanted = wantsCow(ctx);
    if (!wanted.cow) return false;
    const outcome = await addCowCheckout(
      ctx,
      {
        id: task.id,
        branch: task.branch,
        path: task.path,
        commit: task.baseCommit,
        record: true,
        sandbox: sandboxKindFor(ctx, task),
      },
      (line) => ctx.reporter.line(line),
    );
    if (outcome.made) return true;
    const requested = ctx.config.checkout === 'auto' ? 'auto' : 'cow';
    if (outcome.reason !== null) {
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'checkout.fallback',
        level: 'warn',
        message: `checkout: ${requested} fell back to git worktree add because ${outcome.reason}`,
        data: { requested, reason: outcome.reason },
      });
    }
    return false;
  },
};

export const checkoutRemove: RemoveStep = {
  name: 'checkout',
  ownsMount: (_ctx, task, mount) => ownsCheckoutMount(task, mount.mountPoint),
  // After provisioning's release: its mounts sit inside this one.
  release: (ctx, task) => releaseCheckout(ctx, task, true),
  holdsWorkspace: true,
  afterRemove: async (ctx, task) => forgetCheckout(ctx, task.id),
};

export const checkoutGc: GcStep = { name: 'checkout', collect: (ctx) => collectCheckoutGarbage(ctx) };

/** Before any command runs in the workspace (and before provisioning's layers, which sit inside): a lost checkout mount is mounted again. */
export const checkoutBeforeRun: BeforeRunStep = {
  name: 'checkout',
  async run(ctx, task) {
    await ensureCheckoutMounted(ctx, ctx.store.getTask(ctx.key, task.id) ?? task);
    return [];
  },
};
