import { startCommandLine } from './entry.js';

// `warren new`, warren's main job, from the command line: a build of its own with the `new`
// command alone (scripts/bundle.js: dist/bundle-new/new.cjs, one CommonJS file), which
// bin/warren.js runs from the build's V8 code cache (src/cli/code-cache.ts) when no
// `warren warm` takes the command. The command's code initialises only after the entry has
// started its git reads (an import, which the build keeps lazy). Measured: this build's `new`
// is one file of 408 KB against the whole command line's 532 KB; tried and dropped: a chunk of each
// command's own code in the one build (+43 ms of CPU), a second entry there (8 ms saved).
const argv = startCommandLine();
void import('./commands/new-only.js').then(async ({ main, prepareMain, registerNew }) => {
  process.exitCode = await main(argv, prepareMain([registerNew]));
});
