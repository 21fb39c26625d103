#!/usr/bin/env node
// Overhead of `warren exec ID -- true` against running `true` directly, with and without the
// bwrap sandbox, measured in one run on this machine. Prints medians and ratios; never fails.
// Run: npm run build && node bench/exec.js [iterations]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, median, tmp, warrenIn } from './lib.js';

const N = Number(process.argv[2] ?? 20);
const base = tmp('warren-bench-exec-');
const repo = path.join(base, 'repo');
const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };

function git(...args) {
  execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
}
fs.mkdirSync(repo);
git('init', '-q', '-b', 'main');
git('config', 'user.name', 'bench');
git('config', 'user.email', 'bench@example.invalid');
fs.writeFileSync(path.join(repo, 'README.md'), '# bench\n');
git('add', '-A');
git('commit', '-q', '-m', 'init');

const warren = warrenIn(repo, env);
warren('new', 'feat', 'plain');
warren('new', 'feat', 'boxed', '--sandbox', 'bwrap');

// The egress allowlist (issue 15): a second repository whose warren.yaml gives bwrap an allowlist,
// so every run also starts warren's proxy and the bridge inside the sandbox.
const allowRepo = path.join(base, 'repo-allow');
fs.mkdirSync(allowRepo);
for (const args of [
  ['init', '-q', '-b', 'main'],
  ['config', 'user.name', 'bench'],
  ['config', 'user.email', 'bench@example.invalid'],
])
  execFileSync('git', args, { cwd: allowRepo, stdio: 'ignore' });
fs.writeFileSync(path.join(allowRepo, 'warren.yaml'), 'sandbox: { kind: bwrap, allow: ["127.0.0.1:9"] }\n');
execFileSync('git', ['add', '-A'], { cwd: allowRepo, stdio: 'ignore' });
execFileSync('git', ['commit', '-q', '-m', 'init'], { cwd: allowRepo, stdio: 'ignore' });
const warrenAllow = warrenIn(allowRepo, env);
warrenAllow('new', 'feat', 'allowed');

function time(fn) {
  fn(); // warm-up
  const samples = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(samples);
}
function supervised(id) {
  // The run's own duration, as the supervisor measured it (spawn to end, no Node start-up).
  const samples = [];
  for (let i = 0; i < N; i++) samples.push(JSON.parse(warren('--json', 'exec', id, '--', 'true')).durationMs);
  return median(samples);
}

const direct = time(() => spawnSync('true'));
const nodeFloor = time(() => spawnSync(process.execPath, [BIN, '--version']));
const plain = time(() => warren('exec', 'plain', '--', 'true'));
const boxed = time(() => warren('exec', 'boxed', '--', 'true'));
const allowed = time(() => warrenAllow('exec', 'allowed', '--', 'true'));
const plainRun = supervised('plain');
const boxedRun = supervised('boxed');
const allowedRuns = [];
for (let i = 0; i < N; i++)
  allowedRuns.push(JSON.parse(warrenAllow('--json', 'exec', 'allowed', '--', 'true')).durationMs);
const allowedRun = median(allowedRuns);

const rows = [
  ['true, run directly', direct],
  ['warren --version (Node start-up floor)', nodeFloor],
  ['warren exec -- true (no sandbox)', plain],
  ['warren exec -- true (bwrap sandbox)', boxed],
  ['warren exec -- true (bwrap, egress allowlist)', allowed],
  ['  of which the supervised run itself (no sandbox)', plainRun],
  ['  of which the supervised run itself (bwrap)', boxedRun],
  ['  of which the supervised run itself (bwrap, allowlist)', allowedRun],
  ...nonRootRows(),
];
/**
 * As a user who is not root (uid 65534 through setpriv, when this runs as root): every command
 * runs in a user namespace (PID-namespace containment), and a namespaced cow layer is mounted
 * inside it for each run. Skipped, with the reason, where that cannot run.
 */
function nonRootRows() {
  const why =
    process.getuid?.() !== 0
      ? 'not running as root, so cannot become uid 65534'
      : spawnSync('setpriv', ['--version']).status !== 0
        ? 'setpriv is missing'
        : null;
  if (why) {
    console.error(`bench: skipped the non-root rows: ${why}`);
    return [];
  }
  const nb = path.join(base, 'nobody');
  const nbRepo = path.join(nb, 'repo');
  fs.mkdirSync(path.join(nbRepo, 'vendor/lib'), { recursive: true });
  fs.chmodSync(base, 0o755);
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(nbRepo, 'vendor/lib', `f${i}.txt`), `file ${i}\n`);
  fs.writeFileSync(path.join(nbRepo, '.gitignore'), 'vendor/\n');
  fs.writeFileSync(path.join(nbRepo, 'README.md'), '# bench\n');
  execFileSync('chown', ['-R', '65534:65534', nb]);
  const asNobody = (args, cwd = nbRepo) =>
    spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', ...args], {
      cwd,
      // WARREN_COW=userns: the namespaced rung, which these rows measure, even where fuse-overlayfs could mount on the host.
      env: {
        ...process.env,
        HOME: nb,
        WARREN_HOME: path.join(nb, 'home'),
        GIT_CONFIG_NOSYSTEM: '1',
        WARREN_COW: 'userns',
      },
      encoding: 'utf8',
    });
  const must = (args) => {
    const r = asNobody(args);
    if (r.status !== 0) throw new Error(`${args.join(' ')} as uid 65534 failed: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  must(['git', 'init', '-q', '-b', 'main']);
  must(['git', 'add', '-A']);
  must(['git', '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '-m', 'files']);
  must([process.execPath, BIN, 'new', 'feat', 'nsplain']);
  fs.writeFileSync(path.join(nbRepo, 'warren.yaml'), 'provision:\n  - { path: vendor, mode: cow }\n');
  execFileSync('chown', ['65534:65534', path.join(nbRepo, 'warren.yaml')]);
  // A provision setting is one the user trusts (UNTRUSTED_COMMANDS otherwise), as by hand.
  must([process.execPath, BIN, 'trust', '--yes']);
  const created = JSON.parse(must([process.execPath, BIN, '--json', 'new', 'feat', 'nscow']));
  const shown = JSON.parse(must([process.execPath, BIN, '--json', 'show', created.id]));
  const step = shown.data.provision?.[0];
  if (step?.method !== 'overlay (user namespace)') {
    console.error(
      `bench: skipped the non-root rows: uid 65534 got ${JSON.stringify(step)} instead of a namespaced overlay`,
    );
    return [];
  }
  const nsRun = (id) => {
    const samples = [];
    for (let i = 0; i < N; i++)
      samples.push(JSON.parse(must([process.execPath, BIN, '--json', 'exec', id, '--', 'true'])).durationMs);
    return median(samples);
  };
  const rows = [
    [
      'warren exec -- true as uid 65534 (user namespace)',
      time(() => must([process.execPath, BIN, 'exec', 'nsplain', '--', 'true'])),
    ],
    [
      'warren exec -- true as uid 65534, cow layer mounted per run',
      time(() => must([process.execPath, BIN, 'exec', 'nscow', '--', 'true'])),
    ],
    ['  of which the supervised run itself (user namespace)', nsRun('nsplain')],
    ['  of which the supervised run itself (with the cow mount)', nsRun('nscow')],
  ];
  return rows;
}

console.log(
  `warren exec overhead — median of ${N}, ${os.cpus().length} CPUs, ${os.platform()} ${os.release()}, load average ${os.loadavg()[0].toFixed(1)}`,
);
console.log(`${'case'.padEnd(60)} ${'ms'.padStart(9)} ${'× true'.padStart(9)}`);
for (const [name, ms] of rows)
  console.log(`${name.padEnd(60)} ${ms.toFixed(1).padStart(9)} ${(ms / direct).toFixed(1).padStart(9)}`);
console.log(
  `bwrap vs no sandbox, end to end: ${(boxed / plain).toFixed(2)}×; supervised run: ${(boxedRun / plainRun).toFixed(2)}×`,
);
console.log(
  `bwrap with an egress allowlist vs bwrap, end to end: ${(allowed / boxed).toFixed(2)}×; supervised run: ${(allowedRun / boxedRun).toFixed(2)}×`,
);
// Whatever is still mounted under the bench's folder comes off first: rm -r would go through it.
for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').reverse()) {
  const at = line.split(' ')[4];
  if (at?.startsWith(base)) spawnSync('umount', ['-l', at], { stdio: 'ignore' });
}
fs.rmSync(base, { recursive: true, force: true });
