import { objectFact, type FactsOf } from '../state/facts.js';
import type { Fingerprint } from './fingerprint.js';

/** What `land` put on the base. */
export interface LandedFacts {
  commit: string;
  tree: string;
  taskCommit: string;
  forkPoint: string;
  base: string;
  baseBefore: string;
  excluded: string[];
  at: string;
}

/** The last `land --branch-only` push. */
export interface ReviewPush {
  remote: string;
  ref: string;
  commit: string;
  at: string;
}

/** What landing records on a task. */
export const LANDING_FACTS = {
  /** The shared git state (hooks, config) at `new`, or as accepted later. */
  fingerprint: objectFact<Fingerprint>(
    (v) => typeof v.hooksDir === 'string' && typeof v.hooks === 'object' && v.hooks !== null && !Array.isArray(v.hooks),
  ),
  landed: objectFact<LandedFacts>((v) => typeof v.commit === 'string' && typeof v.taskCommit === 'string'),
  reviewPush: objectFact<ReviewPush>((v) => typeof v.commit === 'string'),
};

declare module '../state/facts.js' {
  interface TaskFacts extends FactsOf<typeof LANDING_FACTS> {}
}
