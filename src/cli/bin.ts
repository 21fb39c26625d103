import { prefetchFor } from './prefetch.js';

// A reader that went away (`warren list | head -1`) makes writes to stdout or stderr fail with
// EPIPE. That is not warren's failure and must not end it with a stack trace: what is left to
// print goes nowhere, and the exit status still says how the command ended. A supervised run
// hears it too, and ends its command (src/run/supervisor.ts).
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

// The command line's code, bundled by scripts/bundle.js into dist/bundle/bin.js and loaded by
// bin/warren.js when no `warren warm` takes the command (src/cli/warm-client.ts). Almost every
// command starts by finding the repository (one git call), and `new` then reads its branches
// (another): those calls start here, and git runs while the rest of the command line's code
// loads (about 50 ms of a command's start).
const argv = process.argv.slice(2);
void prefetchFor(argv, process.cwd());
const { main } = await import('./main.js');
process.exitCode = await main(argv);
