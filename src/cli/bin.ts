import { startCommandLine } from './entry.js';

// The command line's code, bundled by scripts/bundle.js into dist/bundle/bin.js and loaded by
// bin/warren.js when no `warren warm` takes the command (src/cli/warm-client.ts) and the command
// is not `new` (src/cli/bin-new.ts). Every command is registered: `--help` lists them all, and
// a misspelt one gets a suggestion.
const argv = startCommandLine();
const { main, prepareMain, COMMANDS } = await import('./commands/all.js');
process.exitCode = await main(argv, prepareMain(COMMANDS));
