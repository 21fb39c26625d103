#!/usr/bin/env node
// What each runner costs, measured in one run with interleaved rounds in rotating order:
// - per exec: `warren exec ID -- true` end to end, and the run's own duration as the supervisor
//   measured it, for a task with no sandbox, in bwrap, and in its container (sandbox: container);
// - per task: `warren new` and its first `exec -- true` end to end (a container task's container
//   is made during `new`), then `warren rm`.
// - the same for a task in a Kubernetes cluster (`runner: k8s:NAME`) against the loopback API
//   server of the tests (test/helpers/k8s-server.ts, run in a process of its own): its sandboxes
//   are podman containers, so this is warren's side of the cost (claim, exec through the API
//   server's websocket, git in and out), not a real cluster's.
// - an SSH task's `new` (`--runner ssh:box`: a second local user behind sshd on 127.0.0.1, made
//   here as root; left out where sshd is missing or not root) against a local task's `new`.
// Prints medians and ratios; never fails. Goals (issue 37): a task ready in a container ≤ 1.5×
// bwrap's; per-exec overhead ≤ 0.4 s; an SSH task's `new` ≤ 2× a local one. Run: npm run bench runners [rounds]
//   BENCH_RUNNERS=bwrap,container   only these (of none, bwrap, container, k8s, ssh)
//   BENCH_BEFORE_BIN=DIR/bin/warren.js   another build's task readiness too, in the same rounds (e.g. main's
//     from `git archive main | tar -x -C DIR`, built): each runner's `new` + first exec by both builds
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, makeRepo, median, msOf, ROOT, sh, tmp, warrenIn } from './lib.js';
import { startServer } from './k8s-loop.js';
import { startHost } from './ssh-host.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const ONLY = process.env.BENCH_RUNNERS ? process.env.BENCH_RUNNERS.split(',') : null;
const KINDS = ['none', 'bwrap', 'container', 'k8s'].filter((k) => !ONLY || ONLY.includes(k));
const BEFORE_BIN = process.env.BENCH_BEFORE_BIN || null;
const podman = spawnSync('podman', ['--version']).status === 0;
const bwrap = spawnSync('bwrap', ['--version']).status === 0;
const kinds = KINDS.filter((k) => (k === 'container' || k === 'k8s' ? podman : k === 'bwrap' ? bwrap : true));
if (kinds.length < KINDS.length)
  console.log(`skipped: ${KINDS.filter((k) => !kinds.includes(k)).join(', ')} (not on this machine)`);

const base = tmp('warren-bench-runners-');
const repo = makeRepo(path.join(base, 'repo'), 200);
const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
const local = warrenIn(repo, env);
// A task in a cluster: a repository of its own whose warren.yaml says `runner: k8s:loop`.
const server = kinds.includes('k8s') ? await startServer(path.join(base, 'k8s')) : null;
const clusterWarren = server ? clusterRepo(server.kubeconfig) : null;
const warren = (...args) => (args.some((a) => /-k8s$/.test(a)) ? clusterWarren(...args) : local(...args));
const sandboxOf = (k) => (k === 'k8s' ? [] : ['--sandbox', k]);
for (const k of kinds) warren('new', 'feat', `exec-${k}`, ...sandboxOf(k));
// Warm-up: each task's first command (a container task's container is made here, a k8s task's claim), once.
for (const k of kinds) warren('exec', `exec-${k}`, '--', 'true');

const endToEnd = Object.fromEntries(kinds.map((k) => [k, []]));
const supervised = Object.fromEntries(kinds.map((k) => [k, []]));
const ready = Object.fromEntries(kinds.map((k) => [k, []]));
const readyBefore = Object.fromEntries(kinds.map((k) => [k, []]));
// The other build's warren, in the same repositories and WARREN_HOME (its state must be this build's schema).
const before = (...args) => {
  const dir = args.some((a) => /-k8s$/.test(a)) ? path.join(base, 'cluster-repo') : repo;
  const home = args.some((a) => /-k8s$/.test(a)) ? path.join(base, 'cluster-home') : env.WARREN_HOME;
  const r = spawnSync(process.execPath, [BEFORE_BIN, ...args], {
    cwd: dir,
    env: { ...env, WARREN_HOME: home },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`before: warren ${args.join(' ')} failed: ${r.stdout}${r.stderr}`);
};
const removed = Object.fromEntries(kinds.map((k) => [k, []]));
const host =
  !ONLY || ONLY.includes('ssh') ? await startHost(base, env.WARREN_HOME, BIN) : { ok: false, why: 'not asked for' };
if (!host.ok) console.log(`skipped: ssh (${host.why})`);
const made = { here: [], ssh: [] };
// Warm-up: the host's connection and repository made once (as a user's first task there would).
if (host.ok) {
  local('new', 'feat', 'warm-ssh', '--no-sync', '--runner', 'ssh:box');
  local('rm', 'warm-ssh');
}
for (let round = 0; round < ROUNDS; round++) {
  const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]);
  for (const k of order) {
    endToEnd[k].push(msOf(() => warren('exec', `exec-${k}`, '--', 'true')));
    supervised[k].push(JSON.parse(warren('--json', 'exec', `exec-${k}`, '--', 'true')).durationMs);
  }
  for (const k of order) {
    const id = `t${round}-${k}`;
    const builds = BEFORE_BIN ? (round % 2 ? ['before', 'this'] : ['this', 'before']) : ['this'];
    for (const b of builds) {
      const w = b === 'this' ? warren : before;
      const tid = b === 'this' ? id : `${id}-before`;
      (b === 'this' ? ready : readyBefore)[k].push(
        msOf(() => {
          w('new', 'feat', tid, ...sandboxOf(k));
          w('exec', tid, '--', 'true');
        }),
      );
      if (b === 'this') removed[k].push(msOf(() => warren('rm', tid)));
      else warren('rm', tid);
    }
  }
  if (host.ok) {
    for (const where of round % 2 ? ['ssh', 'here'] : ['here', 'ssh']) {
      const id = `n${round}-${where}`;
      made[where].push(
        msOf(() => local('new', 'feat', id, '--no-sync', ...(where === 'ssh' ? ['--runner', 'ssh:box'] : []))),
      );
      local('rm', id);
    }
  }
}
for (const k of kinds) warren('rm', `exec-${k}`);

const m = (xs) => Math.round(median(xs));
console.log(`${ROUNDS} interleaved rounds, rotating order; medians in ms`);
console.log('| runner | exec -- true, end to end | the run itself (supervisor) | new + first exec | rm |');
console.log('|---|---|---|---|---|');
for (const k of kinds)
  console.log(`| ${k} | ${m(endToEnd[k])} | ${m(supervised[k])} | ${m(ready[k])} | ${m(removed[k])} |`);
if (kinds.includes('container')) {
  if (kinds.includes('none')) {
    const over = m(supervised.container) - m(supervised.none);
    console.log(`container per-exec overhead over none (the run itself): ${over} ms (goal ≤ 400 ms)`);
  }
  if (kinds.includes('bwrap')) {
    console.log(
      `a task ready in a container / in bwrap: ${(median(ready.container) / median(ready.bwrap)).toFixed(2)}× (goal ≤ 1.5×)`,
    );
    console.log(
      `exec end to end, container / bwrap: ${(median(endToEnd.container) / median(endToEnd.bwrap)).toFixed(2)}×`,
    );
  }
}
if (BEFORE_BIN) {
  console.log(`new + first exec, ${BEFORE_BIN} (before) → this build, same rounds:`);
  for (const k of kinds) console.log(`| ${k} | ${m(readyBefore[k])} → ${m(ready[k])} |`);
  if (kinds.includes('container') && kinds.includes('bwrap'))
    console.log(
      `a task ready in a container / in bwrap: before ${(median(readyBefore.container) / median(readyBefore.bwrap)).toFixed(2)}×, this build ${(median(ready.container) / median(ready.bwrap)).toFixed(2)}×`,
    );
}
if (kinds.includes('k8s')) {
  if (kinds.includes('none'))
    console.log(`k8s per-exec overhead over none (the run itself): ${m(supervised.k8s) - m(supervised.none)} ms`);
  if (kinds.includes('container'))
    console.log(
      `a task ready in a cluster / in a container: ${(median(ready.k8s) / median(ready.container)).toFixed(2)}×`,
    );
}
if (server) await server.close();
if (host.ok) {
  console.log(`| new, here | ${m(made.here)} |\n| new, on host box over SSH | ${m(made.ssh)} |`);
  console.log(`an SSH task's new / a local one: ${(median(made.ssh) / median(made.here)).toFixed(2)}× (goal ≤ 2×)`);
  host.stop();
}
fs.rmSync(base, { recursive: true, force: true });

function clusterRepo(kubeconfig) {
  const dir = makeRepo(path.join(base, 'cluster-repo'), 200);
  const home = path.join(base, 'cluster-home');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    path.join(home, 'config.yaml'),
    `clusters:\n  loop:\n    kubeconfig: ${kubeconfig}\n    replicas: 2\n`,
  );
  fs.writeFileSync(path.join(dir, 'warren.yaml'), 'runner: k8s:loop\n');
  sh('git', ['add', '-A'], { cwd: dir });
  sh('git', ['commit', '-q', '-m', 'runner'], { cwd: dir });
  const w = warrenIn(dir, { ...process.env, WARREN_HOME: home });
  w('trust', '--yes');
  return w;
}
