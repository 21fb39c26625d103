import fs from 'node:fs';
import path from 'node:path';

/**
 * The two tiers of the suite. `npm test` runs everything, as CI does. `npm run test:quick`
 * (WARREN_TEST_TIER=quick) runs what needs nothing but Node, git and util-linux (what warren
 * itself needs) and no long matrix: tests that need another tool, root or a long matrix are left
 * out, each noted here, and test/helpers/quick-summary.ts says what was left out when the run
 * ends. A left-out test is no skip for CI to question: CI runs the full tier.
 */
export const QUICK = process.env.WARREN_TEST_TIER === 'quick';

/** Where each test process notes what the quick tier left out (set by the summary's setup). */
const NOTES = process.env.WARREN_TIER_NOTES;

/** Notes one thing the quick tier leaves out: `what` (a file, a capability) and why. */
export function leftOut(suite: string, what: string): void {
  if (!QUICK || !NOTES) return;
  fs.mkdirSync(NOTES, { recursive: true });
  fs.appendFileSync(path.join(NOTES, `${process.pid}.txt`), `${suite}\t${what}\n`);
}

/**
 * For a long matrix (the crash matrix, the `.worktreeinclude` oracle): true when this tier
 * leaves it out. `describe.skipIf(fullTierOnly(import.meta.filename, 'the crash matrix'))`.
 */
export function fullTierOnly(testFile: string, what: string): boolean {
  if (!QUICK) return false;
  leftOut(path.relative(path.resolve(import.meta.dirname, '..'), testFile).replace(/\.test\.ts$/, ''), what);
  return true;
}
