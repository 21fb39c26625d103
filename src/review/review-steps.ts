import type { RemoveStep } from '../workspace/types.js';
import { deleteComments } from './comments.js';

/** Review's step in a workspace's life: a removed task's comments go with it. */
export const reviewRemove: RemoveStep = {
  name: 'review',
  async afterRemove(ctx, task) {
    deleteComments(ctx, task);
  },
};
