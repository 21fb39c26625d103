// `npm run build && node scripts/doc-examples.js`: runs every command against a throwaway
// repository and prints each invocation with its real output and exit status. The examples in
// src/cli/reference.ts were pasted from this (temp paths, hashes and times differ per run).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mountsUnder, readMounts } from '../dist/system/mounts.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'warren.js');
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-docs-')));
const repo = path.join(base, 'shop');
const origin = path.join(base, 'origin.git');
// A `warren` on PATH for the shell lines (completion calls it back).
const shim = path.join(base, 'bin');
fs.mkdirSync(shim);
fs.writeFileSync(
  path.join(shim, 'warren'),
  `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
  { mode: 0o755 },
);
const env = { ...process.env, WARREN_HOME: path.join(base, 'home'), PATH: `${shim}:${process.env.PATH}` };

function cleanup() {
  if (!fs.existsSync(base)) return;
  const mounts = mountsUnder(readMounts(), base).sort((a, b) => b.mountPoint.length - a.mountPoint.length);
  for (const m of mounts) spawnSync('umount', [m.mountPoint], { stdio: 'ignore' });
  fs.rmSync(base, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(130));

const quote = (a) => (/[\s;'"$&|<>*]/.test(a) ? `'${a.replaceAll("'", "'\\''")}'` : a);

function git(...args) {
  return execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
}

function sh(line) {
  console.log(`$ ${line}`);
  const res = spawnSync('sh', ['-c', line], { cwd: repo, env, encoding: 'utf8' });
  process.stdout.write(res.stdout + res.stderr);
}

function warren(...args) {
  console.log(`$ warren ${args.map(quote).join(' ')}`);
  const res = spawnSync(process.execPath, [BIN, ...args], { cwd: repo, env, encoding: 'utf8' });
  // stderr first: it is what a terminal shows before the result line for most commands.
  const out = res.stderr + res.stdout;
  process.stdout.write(out === '' || out.endsWith('\n') ? out : `${out}\n`);
  console.log(`[exit ${res.status}]`);
  return res;
}

function section(title) {
  console.log(`\n===== ${title}`);
}

execFileSync('git', ['init', '-q', '--bare', origin]);
fs.mkdirSync(repo, { recursive: true });
git('init', '-q', '-b', 'main');
git('config', 'user.name', 'Dev');
git('config', 'user.email', 'dev@example.invalid');
fs.writeFileSync(path.join(repo, 'README.md'), '# shop\n');
fs.writeFileSync(path.join(repo, 'app.js'), 'console.log("hello");\n');
fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n.env\n');
fs.writeFileSync(path.join(repo, 'package-lock.json'), '{"lockfileVersion": 3}\n');
fs.writeFileSync(
  path.join(repo, 'warren.yaml'),
  [
    'provision:',
    '  - { path: node_modules, mode: cow }',
    '  - { path: .env, mode: copy }',
    'setup:',
    '  - { id: hello, run: "echo setting up $WARREN_TASK_ID on port $WARREN_PORT" }',
    'verify:',
    '  - { id: test, run: "node app.js", timeout: 30s }',
    '  - { id: lint, run: [sh, -c, "grep -q TODO app.js"], required: false }',
    'protected: [".env.testing"]',
    'agents:',
    '  echo-agent: { command: [cat], prompt: stdin }',
    '',
  ].join('\n'),
);
git('add', '-A');
git('commit', '-q', '-m', 'initial');
git('remote', 'add', 'origin', origin);
git('push', '-q', '-u', 'origin', 'main');
for (const name of ['left-pad', 'is-odd']) {
  fs.mkdirSync(path.join(repo, 'node_modules', name), { recursive: true });
  fs.writeFileSync(path.join(repo, 'node_modules', name, 'index.js'), `module.exports = "${name}";\n`);
}
fs.writeFileSync(path.join(repo, '.env'), 'SECRET=demo\n');
console.log(`repository ${repo}; WARREN_HOME=${env.WARREN_HOME}`);
sh('cat warren.yaml');

section('trust');
warren('new', 'feat', 'cart');
warren('trust');
warren('--json', 'trust', '--yes');

section('new');
warren('new', 'feat', 'cart');
warren('--json', 'new', 'fix', 'login');
warren('new', 'feat', '--', 'x; rm -rf ~');
const cart = JSON.parse(
  spawnSync(process.execPath, [BIN, '--json', 'show', 'cart'], { cwd: repo, env, encoding: 'utf8' }).stdout,
).path;

section('list');
warren('list');
warren('--json', 'list');

section('exec');
warren(
  'exec',
  'cart',
  '--',
  'sh',
  '-c',
  'echo "export const cart = [];" > cart.js; echo patched >> node_modules/left-pad/index.js; echo SECRET=mine > .env.testing; echo $WARREN_PORT',
);
warren('--json', 'exec', 'cart', '--timeout', '1s', '--', 'sh', '-c', 'setsid sleep 600 & sleep 600');
warren('exec', 'cart', 'ls', '-la');

section('run');
warren('run', 'cart', '--agent', 'echo-agent', '--prompt', '-n "quoted" $HOME');
warren('run', 'cart', '--agent', 'nope', '--prompt', 'hi');

section('status');
warren('status', 'cart');
warren('status', 'cart', '--files');
warren('--json', 'status', 'cart');

section('path');
warren('path', 'cart');
warren('--json', 'path', 'login');

section('diff');
warren('diff', 'cart', '--stat');
warren('diff', 'cart');
warren('--json', 'diff', 'cart', '--uncommitted', '--stat');

section('comment / comments / run --review');
warren('comment', 'cart', 'cart.js:1', 'export', 'a', 'function', 'that', 'adds', 'to', 'it');
warren('--json', 'comment', 'cart', 'app.js:1', 'say hello to the cart');
warren('comments', 'cart');
warren('--json', 'comments', 'cart', '--resolve', '2');
warren('run', 'cart', '--agent', 'echo-agent', '--review');
warren('comments', 'cart');

section('completion');
sh("bash -c 'source <(warren completion bash); complete -p warren'");
sh('warren completion zsh | head -3');

section('show');
warren('show', 'cart', '--events', '5');

section('setup');
warren('setup', 'cart');

section('verify');
warren('verify', 'cart');
warren('--json', 'verify', 'cart');

section('provision');
warren('provision', 'login');
warren('provision', 'login', '--refresh');

section('checkpoint');
warren('checkpoint', 'cart', '-m', 'a cart');
warren('checkpoint', 'cart');
warren('--json', 'checkpoint', 'cart');

section('rm (refusals)');
sh(`echo draft > ${quote(path.join(cart, 'draft.txt'))}`);
warren('rm', 'cart');
sh(`rm ${quote(path.join(cart, 'draft.txt'))}`);
warren('rm', 'cart', '--delete-branch');

section('land');
warren('land', 'cart', '-m', 'feat: a cart');
warren('--json', 'land', 'login');
sh(`echo 'console.log("hi");' > ${quote(path.join(path.dirname(cart), 'login', 'app.js'))}`);
warren('checkpoint', 'login', '-m', 'say hi');
warren('--json', 'land', 'login', '--push');
sh('git log --format="%h %s" -3');

section('audit');
warren('audit', 'login');

section('rm');
warren('rm', 'cart', '--delete-branch');
warren('--json', 'rm', 'login');

section('rm --discard / list --archived / restore');
warren('new', 'feat', 'search', '--no-setup');
const search = JSON.parse(
  spawnSync(process.execPath, [BIN, '--json', 'path', 'search'], { cwd: repo, env, encoding: 'utf8' }).stdout,
).path;
sh(
  `cd ${quote(search)} && echo 'export const search = 1;' > search.js && git add search.js && git commit -qm 'a search' && echo draft > notes.txt && echo '// TODO' >> app.js`,
);
warren('rm', 'search');
warren('rm', 'search', '--discard');
warren('list', '--archived');
warren('--json', 'list', '--archived');
warren('restore', 'search', '--no-setup');
sh(`cd ${quote(search)} && git status --short && git log --format='%h %s' -2`);
warren('--json', 'rm', 'search', '--discard');
warren('--json', 'restore', 'search');

section('scan / gc');
warren('new', 'docs', 'api', '--no-setup');
const api = JSON.parse(
  spawnSync(process.execPath, [BIN, '--json', 'show', 'api'], { cwd: repo, env, encoding: 'utf8' }).stdout,
).path;
spawnSync('umount', [path.join(api, 'node_modules')], { stdio: 'ignore' });
fs.rmSync(api, { recursive: true, force: true });
fs.mkdirSync(path.join(path.dirname(api), 'boot')); // a folder warren did not make: listed, never deleted
// A worktree made by hand under the root and deleted: git's record of it is prunable.
git('worktree', 'add', '-q', '-b', 'by-hand', path.join(path.dirname(api), 'by-hand'));
fs.rmSync(path.join(path.dirname(api), 'by-hand'), { recursive: true, force: true });
warren('scan');
warren('--json', 'scan');
warren('gc');
warren('rm', 'api');
warren('--json', 'gc');

section('policy');
warren('policy', 'keygen');
fs.writeFileSync(
  path.join(repo, 'warren.policy.yaml'),
  'version: 1\nexpires: "2027-06-30T00:00:00Z"\nrules:\n  - { tasks: "*", sandbox: [none, bwrap], network: false }\n',
);
warren('policy', 'sign', 'warren.policy.yaml');
warren('policy', 'verify');
warren('--json', 'policy', 'verify');
sh('echo "# edited" >> warren.policy.yaml');
warren('policy', 'verify');

section('serve');
await serve(['serve', '--port', '0']);
await serve(['--json', 'serve', '--port', '0']);
warren('serve', '--host', '0.0.0.0');

section('errors');
warren('--json', 'show', 'nope');
warren('new', 'feat', 'bad', '--sandbox', 'docker');
warren('exec', 'login', '--timeout', 'soon', '--', 'true');

/** `serve` runs until a signal: print what it wrote once it is listening, then stop it. */
function serve(args) {
  console.log(`$ warren ${args.join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: repo, env });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (/ctrl-c|"token"[^}]*}/s.test(out)) child.kill('SIGINT');
    });
    child.stderr.on('data', (d) => process.stdout.write(d));
    child.on('close', (code) => {
      process.stdout.write(out);
      console.log(`^C\n[exit ${code}]`);
      resolve();
    });
  });
}
