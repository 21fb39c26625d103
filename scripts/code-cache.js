// Makes the V8 code cache of `warren new`'s build (dist/bundle-new/new.cjs.cache; run by
// `npm run build`, after the bundles): runs one real `warren new` in a repository made for it,
// and the loader (src/cli/code-cache.ts) writes, as the command exits, what V8 compiled, the
// bundle's SHA-256 first. Without it warren works and `warren new` says it is slower: this warns
// and does not fail.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const cacheFile = path.join(root, 'dist/bundle-new/new.cjs.cache');
fs.rmSync(cacheFile, { force: true });

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-code-cache-'));
try {
  const repo = path.join(scratch, 'repo');
  fs.mkdirSync(repo);
  const git = (...args) => execFileSync('git', ['-c', 'user.name=warren', '-c', 'user.email=warren@localhost', '-c', 'commit.gpgsign=false', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'README'), 'code cache\n');
  git('add', '.');
  git('commit', '-qm', 'init');
  // Node's own options would change what V8 compiles and the flags the cache is checked against.
  const { NODE_OPTIONS: _options, WARREN_SPAWN: _spawn, ...env } = process.env;
  const made = spawnSync(process.execPath, [path.join(root, 'bin/warren.js'), 'new', 'chore', 'cache'], {
    cwd: repo,
    env: { ...env, WARREN_HOME: path.join(scratch, 'home'), WARREN_WARM: 'off', WARREN_CODE_CACHE_WRITE: cacheFile },
    encoding: 'utf8',
  });
  if (made.status !== 0 || !fs.existsSync(cacheFile)) {
    console.warn(`warren: the code cache of \`warren new\` was not made (exit ${made.status}: ${made.stderr.trim().split('\n')[0] ?? ''}); \`warren new\` will compile its code each time, ~30 ms slower, and say so.`);
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
