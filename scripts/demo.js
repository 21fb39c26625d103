// `npm run demo`: drives real workspaces on a throwaway repository with the real CLI, printing
// each command and its real output. Nothing here is canned: every line below comes from warren.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'warren.js');
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-demo-')));
const repo = path.join(base, 'shop');
const env = { ...process.env, WARREN_HOME: path.join(base, 'warren-home') };

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
git('add', '-A');
git('commit', '-q', '-m', 'initial');
console.log(`A throwaway repository at ${repo}; WARREN_HOME=${env.WARREN_HOME}`);

step('Three agents, three workspaces');
warren('new', 'feat', 'cart');
warren('new', 'fix', 'login');
warren('new', 'docs', 'api');
warren('list');

step('Hostile names are refused before anything is made');
warren('new', 'feat', '--', 'x; rm -rf ~');

step('An agent works in its own worktree');
const cart = JSON.parse(spawnSync(process.execPath, [BIN, '--json', 'show', 'cart'], { cwd: repo, env, encoding: 'utf8' }).stdout).path;
fs.writeFileSync(path.join(cart, 'cart.js'), 'export const cart = [];\n');
console.log(`(wrote ${path.join(cart, 'cart.js')} without committing)`);
warren('rm', 'cart');
execFileSync('git', ['add', '-A'], { cwd: cart });
execFileSync('git', ['commit', '-q', '-m', 'feat: a cart'], { cwd: cart });
console.log('(committed it on feat/cart)');
warren('rm', 'cart', '--delete-branch');
warren('rm', 'cart');

step('Reconciling: a workspace deleted behind warren\'s back');
const api = JSON.parse(spawnSync(process.execPath, [BIN, '--json', 'show', 'api'], { cwd: repo, env, encoding: 'utf8' }).stdout).path;
fs.rmSync(api, { recursive: true, force: true });
warren('scan');
warren('gc');
warren('list');
warren('show', 'login');

fs.rmSync(base, { recursive: true, force: true });
console.log('\nDone; the throwaway repository was deleted.');
