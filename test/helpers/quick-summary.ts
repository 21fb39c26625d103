import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * vitest's global setup for `npm run test:quick`: gives the test processes a folder to note what
 * the quick tier leaves out (test/helpers/tier.ts), and when the run ends says what that was,
 * and that `npm test` runs everything.
 */
export default function setup(): (() => void) | undefined {
  if (process.env.WARREN_TEST_TIER !== 'quick') return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-quick-'));
  process.env.WARREN_TIER_NOTES = dir;
  return () => {
    const bySuite = new Map<string, Set<string>>();
    for (const f of fs.readdirSync(dir)) {
      for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
        const [suite, what] = line.split('\t');
        if (!suite || !what) continue;
        bySuite.set(suite, (bySuite.get(suite) ?? new Set()).add(what));
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
    const needs = new Set([...bySuite.values()].flatMap((s) => [...s]));
    console.log(
      `\nquick tier: only what needs nothing but Node, git and util-linux, and no long matrix. Left out: ${[...needs].sort().join(', ') || 'nothing'} (in ${bySuite.size} test file(s)). \`npm test\` runs everything, as CI does.`,
    );
  };
}
