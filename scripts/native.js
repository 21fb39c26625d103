// Builds native/spawn.c into dist/native/spawn.node (run by `npm run build`, after the bundles):
// warren's way to start a process without forking itself (src/system/native-spawn.ts says why).
// One C file against Node's own N-API headers, so a plain `cc` does it: no node-gyp (which would
// download headers from nodejs.org) and nothing to configure. Without a compiler or the headers
// warren still works, starting processes with child_process: this says so and does not fail.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// `node scripts/native.js [FILE]`: elsewhere than dist/native/spawn.node (its test builds one aside).
const out = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'dist/native/spawn.node');
fs.rmSync(out, { force: true });

function skip(why) {
  console.warn(`warren: the native process starter was not built (${why}); warren will start processes with Node's child_process, ~5-15 ms slower each (docs/benchmarks.md).`);
  process.exit(0);
}

if (process.platform !== 'linux') skip(`it is written for Linux, not ${process.platform}`);
const headerDirs = [process.env.npm_config_nodedir && path.join(process.env.npm_config_nodedir, 'include/node'), path.resolve(path.dirname(process.execPath), '../include/node')].filter(Boolean);
const headers = headerDirs.find((dir) => fs.existsSync(path.join(dir, 'node_api.h')));
if (!headers) skip(`no node_api.h in ${headerDirs.join(' or ')}`);
fs.mkdirSync(path.dirname(out), { recursive: true });
const cc = process.env.CC || 'cc';
const built = spawnSync(cc, ['-O2', '-Wall', '-Werror', '-shared', '-fPIC', `-I${headers}`, path.join(root, 'native/spawn.c'), '-o', out], { stdio: ['ignore', 'inherit', 'inherit'] });
if (built.error || built.status !== 0) skip(built.error ? `${cc}: ${built.error.message}` : `${cc} exited with ${built.status}`);
