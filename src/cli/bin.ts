import { main } from './main.js';

// The command-line entry point, bundled by scripts/bundle.js into dist/bundle/bin.js.
process.exitCode = await main(process.argv.slice(2));
