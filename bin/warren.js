#!/usr/bin/env node
'use strict';
// CommonJS (bin/package.json says so): Node starts a CommonJS file sooner than an ES module
// (118 against 127 ms here, empty files, median of 31). It loads the client of `warren warm`
// first (src/cli/warm-client.ts, built alone into dist/bundle/warm-client.cjs): when a warm
// process takes the command, nothing else loads. Otherwise the command line's bundle
// (scripts/bundle.js) runs the command here: `warren new` its own (src/cli/bin-new.ts says why),
// a CommonJS file run from the build's V8 code cache (src/cli/code-cache.ts).
const path = require('node:path');

const bundle = path.join(__dirname, '..', 'dist', 'bundle');
const client = require(path.join(bundle, 'warm-client.cjs'));
const argv = process.argv.slice(2);
client.runWarm(argv, bundle).then((code) => {
  if (code !== null) process.exitCode = code;
  else if (client.commandOf(argv) !== 'new') return import('../dist/bundle/bin.js');
  else {
    const dir = path.join(__dirname, '..', 'dist', 'bundle-new');
    require(path.join(dir, 'run.cjs')).runFromCodeCache(path.join(dir, 'new.cjs'));
  }
});
