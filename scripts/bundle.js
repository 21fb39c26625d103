// Bundles the command line into dist/bundle/ (run by `npm run build`, after tsc).
//
// Why: Node 20 loads an ES module graph file by file — resolve, read, compile, link — and
// warren's ~120 modules plus commander's took about 150 ms of every command before any work
// started. One bundle (with the lazily imported parts — yaml/zod validation, the web server,
// policy signing — split into chunks that load only when used) cuts that to a fraction.
// better-sqlite3's native addon loads from its own folder (src/state/db.ts).
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

// Chunk names carry content hashes: start empty, or chunks of earlier builds pile up (and ship).
fs.rmSync(path.join(root, 'dist/bundle'), { recursive: true, force: true });
fs.rmSync(path.join(root, 'dist/bundle-new'), { recursive: true, force: true });

const ESM = {
  absWorkingDir: root,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // better-sqlite3's JavaScript is bundled (Node's CommonJS loader would cost ~15 ms a command); its
  // addon loads from node_modules (src/state/db.ts), and `bindings`, its fallback lookup, is never used.
  external: ['bindings'],
  // commander and other CommonJS dependencies call require() for Node's built-ins.
  banner: { js: "import { createRequire as __warrenCreateRequire } from 'node:module'; const require = __warrenCreateRequire(import.meta.url);" },
  // dist/bundle/ and dist/bundle-new/ sit as deep as dist/cli/, so `new URL('../../web/', import.meta.url)` still finds web/ and package.json.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
};

// The command line, and the process `warren warm` keeps waiting (src/cli/warm-server.ts starts it by this name).
await build({ ...ESM, entryPoints: { bin: 'src/cli/bin.ts', 'warm-worker': 'src/cli/warm-worker.ts' }, outdir: 'dist/bundle' });
// `warren new` alone, a build of its own (src/cli/bin-new.ts says why): no module of it is
// shared with the other build's, so one process never holds two copies of one module.
await build({ ...ESM, entryPoints: { 'bin-new': 'src/cli/bin-new.ts' }, outdir: 'dist/bundle-new' });

// What bin/warren.js loads first: the client of `warren warm` (src/cli/warm-client.ts), on its
// own and as CommonJS, because Node starts a CommonJS file sooner than an ES module (118 against
// 127 ms here, empty files), and a command that a warm process runs loads nothing else.
await build({
  absWorkingDir: root,
  entryPoints: ['src/cli/warm-client.ts'],
  outfile: 'dist/bundle/warm-client.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});
