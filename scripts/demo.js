// `npm run demo`: drives real workspaces on a throwaway repository with the real CLI, printing
// each command and its real output. Nothing here is canned: every line below comes from warren.
// As root, node_modules is an overlay (cow); elsewhere warren falls back to a copy and says why.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mountsUnder, readMounts } from '../dist/system/mounts.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'warren.js');
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-demo-')));
const repo = path.join(base, 'shop');
const env = { ...process.env, WARREN_HOME: path.join(base, 'warren-home') };

// Whatever happens — a failed step, Ctrl-C — the throwaway tree goes, mounts first (never delete
// through a mount; an overlay left behind would outlive the demo).
function cleanup() {
  if (!fs.existsSync(base)) return;
  const mounts = mountsUnder(readMounts(), base).sort((a, b) => b.mountPoint.length - a.mountPoint.length);
  for (const m of mounts) spawnSync('umount', [m.mountPoint], { stdio: 'ignore' });
  fs.rmSync(base, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(130));

function git(...args) {
  return execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
}

function warren(...args) {
  console.log(`\n$ warren ${args.map((a) => (/[\s;'"]/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
  const res = spawnSync(process.execPath, [BIN, ...args], { cwd: repo, env, encoding: 'utf8' });
  process.stdout.write(res.stdout);
  process.stdout.write(res.stderr);
  console.log(`(exit ${res.status})`);
  return res;
}

function step(title) {
  console.log(`\n## ${title}`);
}

fs.mkdirSync(repo, { recursive: true });
git('init', '-q', '-b', 'main');
git('config', 'user.name', 'Demo');
git('config', 'user.email', 'demo@example.invalid');
fs.writeFileSync(path.join(repo, 'README.md'), '# shop\n');
fs.writeFileSync(path.join(repo, 'app.js'), 'console.log("hello");\n');
fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n.env\n');
fs.writeFileSync(path.join(repo, 'package-lock.json'), '{"lockfileVersion": 3}\n');
fs.writeFileSync(
  path.join(repo, 'warren.yaml'),
  [
    'provision:',
    '  - { path: node_modules, mode: cow }   # isolated copy-on-write over one install',
    '  - { path: .env, mode: copy }',
    'setup:',
    '  - { id: hello, run: "echo setting up $WARREN_TASK_ID on port $WARREN_PORT" }',
    'verify:',
    '  - { id: test, run: "node app.js", required: true, timeout: 30s }',
    'protected: [".env.testing"]',
    '',
  ].join('\n'),
);
git('add', '-A');
git('commit', '-q', '-m', 'initial');
// An "installed" dependency tree and a secret, both ignored by git.
for (const name of ['left-pad', 'is-odd']) {
  fs.mkdirSync(path.join(repo, 'node_modules', name), { recursive: true });
  fs.writeFileSync(path.join(repo, 'node_modules', name, 'index.js'), `module.exports = "${name}";\n`);
}
fs.writeFileSync(path.join(repo, '.env'), 'SECRET=demo\n');
console.log(`A throwaway repository at ${repo}; WARREN_HOME=${env.WARREN_HOME}`);

step('A fresh clone runs none of its own commands until you trust them');
warren('new', 'feat', 'cart');
warren('trust', '--yes');

step('Three agents, three workspaces');
warren('new', 'feat', 'cart');
warren('new', 'fix', 'login');
warren('new', 'docs', 'api');
warren('list');

step('Hostile names are refused before anything is made');
warren('new', 'feat', '--', 'x; rm -rf ~');

step('An agent works in its own worktree, dependencies included');
warren(
  'exec',
  'cart',
  '--timeout',
  '30s',
  '--',
  'sh',
  '-c',
  'echo "export const cart = [];" > cart.js; echo "patched" >> node_modules/left-pad/index.js; echo "SECRET=mine" > .env.testing',
);
warren('status', 'cart');
console.log(
  `(the main checkout's node_modules/left-pad/index.js is untouched: ${JSON.stringify(fs.readFileSync(path.join(repo, 'node_modules', 'left-pad', 'index.js'), 'utf8'))})`,
);
warren('rm', 'cart');
warren('verify', 'cart');

step('Landing: one squashed commit, protected paths left out');
warren('checkpoint', 'cart', '-m', 'wip: a cart');
warren('land', 'cart', '-m', 'feat: a cart');
console.log(
  `(main now has: ${git('log', '--format=%s', '-2').split('\n').join(' <- ')}; .env.testing on main: ${fs.existsSync(path.join(repo, '.env.testing'))})`,
);
warren('rm', 'cart', '--delete-branch');
warren('audit', 'login');

step("Reconciling: a workspace deleted behind warren's back");
const api = JSON.parse(
  spawnSync(process.execPath, [BIN, '--json', 'show', 'api'], { cwd: repo, env, encoding: 'utf8' }).stdout,
).path;
// (An overlay mounted inside must come off first, or rm -rf stops at the mount point.)
spawnSync('umount', [path.join(api, 'node_modules')], { stdio: 'ignore' });
fs.rmSync(api, { recursive: true, force: true });
warren('scan');
warren('gc');
warren('list');
warren('show', 'login');

step('Clean up: remove the rest');
warren('rm', 'login', '--delete-branch');
cleanup();
console.log('\nDone; the throwaway repository was deleted.');
