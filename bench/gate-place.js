#!/usr/bin/env node
// Where the gate of a task in a Kubernetes cluster runs, and what `land` costs for it, measured in
// one run with interleaved rounds in rotating order, against the tests' loopback API server
// (test/helpers/k8s-server.ts, a process of its own; its sandboxes are podman containers, so this
// is warren's side of the cost, not a real cluster's):
// - claim: the gate in a claim of its own in the cluster (the claim, the integrated commit sent
//   as a bundle, the install and the step exec'd in the pod, the claim deleted);
// - here: the gate in a container here (what a batch with a cluster task and a `postgres`
//   service still gets; every cluster task's gate before the claim was built), of a task that runs
//   in a container here (`sandbox: container`): a cluster task's batch with `run:` or redis
//   services is gated in its claim now, and one with `postgres` cannot be made. Here the install
//   does not run (nothing is provisioned, so no snapshot is missing); in the claim it always does.
// The step is `true`: what is measured is the place, not a suite.
// Each round: a task per place made, given a commit in its pod and checkpointed (not timed);
// then `warren land ID` end to end (timed); then `rm`. Prints medians and the ratio; never fails.
// Run: npm run bench gate-place [rounds]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeRepo, median, msOf, sh, tmp, warrenIn } from './lib.js';
import { startServer } from './k8s-loop.js';

const ROUNDS = Number(process.argv[2] ?? 3);
if (spawnSync('podman', ['--version']).status !== 0) {
  console.log('skipped: podman is not on this machine');
  process.exit(0);
}
// Short paths: a container gate's sockets live under WARREN_HOME, and a socket's path is at most 107 bytes.
const base = tmp('wgp-');
const server = await startServer(path.join(base, 'k8s'));
// The same repository twice: the second's tasks run in a container here, so its gate is a container here.
const PLACES = {
  claim: clusterRepo('c', 'runner: k8s:loop\n'),
  here: clusterRepo('h', 'sandbox: container\n'),
};
const names = Object.keys(PLACES);
const landed = Object.fromEntries(names.map((p) => [p, []]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const place of order) {
      const w = PLACES[place];
      const id = `t${round}`;
      w('new', 'feat', id);
      w('exec', id, '--', 'sh', '-c', `echo ${round} > ${id}.txt`);
      w('checkpoint', id, '-m', `work ${round}`);
      landed[place].push(msOf(() => w('land', id)));
      w('rm', id);
    }
  }
} finally {
  await server.close();
  fs.rmSync(base, { recursive: true, force: true });
}
const m = (xs) => Math.round(median(xs));
console.log(`${ROUNDS} rounds, medians in ms`);
console.log('| the gate runs | `land` end to end |\n|---|---|');
console.log(`| in a claim of the cluster | ${m(landed.claim)} |\n| in a container here | ${m(landed.here)} |`);
console.log(
  `land with the gate in a claim / in a container here: ${(median(landed.claim) / median(landed.here)).toFixed(2)}×`,
);

function clusterRepo(name, more) {
  const dir = makeRepo(path.join(base, name, 'r'), 200);
  const home = path.join(base, name, 'h');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    path.join(home, 'config.yaml'),
    `clusters:\n  loop:\n    kubeconfig: ${server.kubeconfig}\n    replicas: 2\n    template: warren-${name}\n`,
  );
  fs.writeFileSync(path.join(dir, '.gitignore'), '.installed\n');
  fs.writeFileSync(
    path.join(dir, 'warren.yaml'),
    `${more}setup:\n  - { id: install, run: 'echo installed > .installed', gate: install }\nverify:\n  - { id: check, run: 'true' }\n`,
  );
  sh('git', ['add', '-A'], { cwd: dir });
  sh('git', ['commit', '-q', '-m', 'runner'], { cwd: dir });
  const w = warrenIn(dir, { ...process.env, WARREN_HOME: home });
  w('trust', '--yes');
  return w;
}
