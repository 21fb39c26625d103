import { main } from './main.js';

// A reader that went away (`warren list | head -1`) makes writes to stdout or stderr fail with
// EPIPE. That is not warren's failure and must not end it with a stack trace: what is left to
// print goes nowhere, and the exit status still says how the command ended. A supervised run
// hears it too, and ends its command (src/run/supervisor.ts).
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

// The command-line entry point, bundled by scripts/bundle.js into dist/bundle/bin.js.
process.exitCode = await main(process.argv.slice(2));
