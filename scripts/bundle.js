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

/**
 * pg picks its socket by asking whether it runs in a Cloudflare Worker, and when `navigator` is
 * not there (Node 20) it builds a fetch `Response` to find out: that loads Node's own undici,
 * 75–145 ms of every command that opens a database (`new`/`rm` of a task with PostgreSQL, the
 * gate), measured with --cpu-prof. On Node the answer is always no: the bundle takes pg's Node
 * branch only. The build fails if pg's file no longer has the shape this relies on.
 */
const pgNodeStreams = {
  name: 'pg-node-streams',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, (args) => {
      const source = fs.readFileSync(args.path, 'utf8');
      const call = 'const { getStream, getSecureStream } = getStreamFuncs()';
      if (!source.includes(call) || !source.includes('function getNodejsStreamFuncs()'))
        throw new Error(`${args.path}: not the shape scripts/bundle.js expects (see pgNodeStreams)`);
      return {
        contents: source.replace(call, 'const { getStream, getSecureStream } = getNodejsStreamFuncs()'),
        loader: 'js',
      };
    });
  },
};

// Chunk names carry content hashes: start empty, or chunks of earlier builds pile up (and ship).
fs.rmSync(path.join(root, 'dist/bundle'), { recursive: true, force: true });

await build({
  absWorkingDir: root,
  // service-host: what a sandboxed service's daemon runs (src/run/service-host.ts).
  entryPoints: {
    bin: 'src/cli/bin.ts',
    'service-host': 'src/cli/service-host.ts',
    // k8s-exec: the exec client the runner supervises for a `runner: k8s:NAME` task, through the cluster's API server (src/cli/k8s-exec.ts).
    'k8s-exec': 'src/cli/k8s-exec.ts',
  },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // better-sqlite3's JavaScript is bundled (Node's CommonJS loader would cost ~15 ms a command); its
  // addon loads from node_modules (src/state/db.ts), and `bindings`, its fallback lookup, is never used.
  // pg's optional doors: libpq bindings (pg-native, not installed) and Cloudflare's sockets (only on
  // workerd). Neither is reached on Node; left out, each stays a require() that is never made.
  external: ['bindings', 'pg-native', 'pg-cloudflare'],
  plugins: [pgNodeStreams],
  // commander and other CommonJS dependencies call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __warrenCreateRequire } from 'node:module'; const require = __warrenCreateRequire(import.meta.url);",
  },
  // dist/bundle/ sits as deep as dist/cli/, so `new URL('../../web/', import.meta.url)` still finds web/ and package.json.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});

// The dashboard's page shows task-controlled text the way the terminal does, through the same
// function (src/util/terminal-text.ts): built for the browser, served as /terminal-text.js.
// The browser platform also makes the build fail if that file ever imports Node.
fs.rmSync(path.join(root, 'dist/client'), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { 'terminal-text': 'src/util/terminal-text.ts' },
  outdir: 'dist/client',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'chrome100',
  legalComments: 'none',
  logLevel: 'warning',
});
