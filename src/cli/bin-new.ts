import { startCommandLine } from './entry.js';

// `warren new`, warren's main job, from the command line: a build of its own (scripts/bundle.js,
// dist/bundle-new/) with the `new` command alone, loaded by bin/warren.js when no `warren warm`
// takes the command. Node 20 loads an ES module graph file by file and compiles all of it: this
// build's `new` loads 7 files and 354 KB, the whole command line's loaded 14 and 532 KB, and a
// cold `warren new` took 247 → 220 ms of CPU and 284 → 262 ms from start to end (medians of 31,
// both builds interleaved). Tried in the one build and dropped: a chunk of each command's own
// code split the shared code into 60 files (+43 ms of CPU); a second entry there kept shared
// chunks that carried every command's imports (469 KB; 8 ms saved).
const argv = startCommandLine();
const { main, prepareMain, registerNew } = await import('./commands/new-only.js');
process.exitCode = await main(argv, prepareMain([registerNew]));
