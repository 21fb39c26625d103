import { main, prepareMain, COMMANDS } from './commands/all.js';

// The command line, bundled by scripts/bundle.js into dist/bundle/bin.js, which bin/warren.js
// loads. A reader that went away (`warren list | head -1`) makes writes to stdout or stderr
// fail with EPIPE: that is not warren's failure and must not end it with a stack trace; what is
// left to print goes nowhere, and the exit status still says how the command ended.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
process.exitCode = await main(process.argv.slice(2), prepareMain(COMMANDS));
