import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { mountsUnder, readMounts } from '../../src/system/mounts.js';

/** A small install folder shaped like npm's: packages, nested deps, a .bin with relative links. */
export function makeNodeModules(root: string, dir = 'node_modules'): void {
  const nm = path.join(root, dir);
  const files: Record<string, string> = {
    'left-pad/package.json': '{"name":"left-pad","version":"1.3.0","bin":{"left-pad":"cli.js"}}\n',
    'left-pad/index.js': 'module.exports = (s, n) => String(s).padStart(n);\n',
    'left-pad/cli.js': '#!/usr/bin/env node\nconsole.log(require(".")(process.argv[2], 10));\n',
    'dep/package.json': '{"name":"dep","version":"2.0.0"}\n',
    'dep/lib/main.js': 'exports.x = 1;\n',
    'dep/node_modules/inner/index.js': 'exports.inner = true;\n',
    '.package-lock.json': '{"lockfileVersion":3}\n',
  };
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(nm, rel)), { recursive: true });
    fs.writeFileSync(path.join(nm, rel), content);
  }
  fs.chmodSync(path.join(nm, 'left-pad/cli.js'), 0o755);
  fs.mkdirSync(path.join(nm, '.bin'), { recursive: true });
  fs.symlinkSync('../left-pad/cli.js', path.join(nm, '.bin/left-pad'));
}

/** A digest of a tree: every path, type, mode, content and link target (by lstat, never following links). */
export function treeDigest(dir: string): string {
  const hash = createHash('sha256');
  const visit = (rel: string): void => {
    const full = path.join(dir, rel);
    const st = fs.lstatSync(full);
    hash.update(`${rel}\0${st.mode}\0`);
    if (st.isSymbolicLink()) hash.update(`link\0${fs.readlinkSync(full)}\0`);
    else if (st.isFile()) hash.update(fs.readFileSync(full));
    else if (st.isDirectory())
      for (const name of fs.readdirSync(full).sort()) visit(rel === '' ? name : `${rel}/${name}`);
  };
  visit('');
  return hash.digest('hex');
}

/** Unmounts everything mounted at or below `dir` (deepest first), so a test's temp folder can be deleted. */
export function unmountUnder(dir: string): void {
  const points = mountsUnder(readMounts(), dir)
    .map((m) => m.mountPoint)
    .sort((a, b) => b.length - a.length);
  for (const p of points) execFileSync('umount', [p], { stdio: 'ignore' });
}
