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

// A build of one CommonJS file (no splitting: esbuild splits ES modules only).
const CJS = {
  absWorkingDir: root,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
};

// The command line, and the process `warren warm` keeps waiting (src/cli/warm-server.ts starts it by this name).
await build({ ...ESM, entryPoints: { bin: 'src/cli/bin.ts', 'warm-worker': 'src/cli/warm-worker.ts' }, outdir: 'dist/bundle' });
// `warren new` alone, a build of its own (src/cli/bin-new.ts says why): no module of it is
// shared with the other build's, so one process never holds two copies of one module. One
// CommonJS file, so that it can run from a V8 code cache (src/cli/code-cache.ts, made by
// scripts/code-cache.js); the code that only validation needs (yaml, zod) is required from
// node_modules when a warren.yaml must be validated, not carried in the file.
const NEW_FILE = path.join(root, 'dist/bundle-new/new.cjs');
await build({
  ...CJS,
  entryPoints: ['src/cli/bin-new.ts'],
  outfile: NEW_FILE,
  external: ['bindings', 'yaml', 'zod'],
  // import() of a module outside the file becomes require(): the file runs in a vm.Script,
  // which has no ES-module loader of its own.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': '__warrenImportMetaUrl' },
  banner: { js: "const __warrenImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
});
// esbuild's interop copies every export of a module for each file that imports it (`import fs
// from 'node:fs'` in 47 files: 47 copies of fs's ~100 exports, ~1,000 page faults). The same
// module (read the same way) gives the same copy, whose getters read the module itself: one copy
// per module, kept. Fails the build if esbuild's helper changes.
const HELPER = 'var __toESM=(mod,isNodeMode,target)=>(';
const bundled = fs.readFileSync(NEW_FILE, 'utf8');
if (bundled.split(HELPER).length !== 2) throw new Error(`scripts/bundle.js: esbuild's __toESM helper is not in ${NEW_FILE} once as expected; look at its new form and adjust`);
fs.writeFileSync(
  NEW_FILE,
  bundled.replace(HELPER, 'var __warrenInterop=[new Map(),new Map()],__toESM=(mod,isNodeMode)=>{let copies=__warrenInterop[isNodeMode?1:0],copy=copies.get(mod);if(copy===void 0){copy=__toESMOnce(mod,isNodeMode);if(mod!=null)copies.set(mod,copy)}return copy},__toESMOnce=(mod,isNodeMode,target)=>('),
);
// What bin/warren.js calls for `new`: runs new.cjs from its code cache.
await build({ ...CJS, entryPoints: ['src/cli/code-cache.ts'], outfile: 'dist/bundle-new/run.cjs' });

// What bin/warren.js loads first: the client of `warren warm` (src/cli/warm-client.ts), on its
// own and as CommonJS, because Node starts a CommonJS file sooner than an ES module (118 against
// 127 ms here, empty files), and a command that a warm process runs loads nothing else.
await build({ ...CJS, entryPoints: ['src/cli/warm-client.ts'], outfile: 'dist/bundle/warm-client.cjs' });
