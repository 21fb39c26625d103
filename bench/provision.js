// Provisioning benchmark: how fast does a workspace get its dependencies, as ratios against
// `cp -a` measured in the same run. Not a test: prints numbers, never fails on a slow machine.
//
//   npm run bench:provision            (builds first)
//   BENCH_RUNS=5 node bench/provision.js
//   BENCH_ONLY=paired node bench/provision.js   (copy and a first cow step, each against its own cp -a)
//
// The dependency tree is the real one in shared/fixtures/deps-20k above the repository (about 20,000 files),
// installed ONCE with `npm ci` into .bench-cache/ (gitignored) and reused by later runs.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mountsUnder, readMounts } from '../dist/system/mounts.js';
import { startServe } from './lib.js';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, '..');
// Where the fixture, its installed tree and the npm cache's marker are: .ci/deps-20k says (BENCH_FIXTURE picks another fixture).
const fixtureEnv = {
  ...process.env,
  ...(process.env.BENCH_FIXTURE ? { WARREN_DEPS_20K: path.resolve(process.env.BENCH_FIXTURE) } : {}),
};
const where = Object.fromEntries(
  execFileSync(path.join(root, '.ci/deps-20k'), ['--where'], { env: fixtureEnv, encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);
const fixture = where.fixture;
const runs = Number(process.env.BENCH_RUNS ?? 3);
const pairedOnly = process.env.BENCH_ONLY === 'paired';
const warrenBin = path.join(root, 'bin/warren.js');

const cacheDir = where.tree;
// The npm cache .ci/deps-20k fills (test/provision-deps-20k installs from it offline).
const npmCache = path.join(root, '.bench-cache/npm-cache');
const npmFlags = ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', `--cache=${npmCache}`];

/** The tree, installed once by .ci/deps-20k (as CI does), which also fills the npm cache `npm ci` is timed with. */
function ensureCache() {
  if (fs.existsSync(where.marker) && fs.existsSync(path.join(cacheDir, 'node_modules/.package-lock.json'))) return;
  process.stderr.write(`bench: installing ${fixture} once into ${cacheDir} (.ci/deps-20k: npm ci)…\n`);
  execFileSync(path.join(root, '.ci/deps-20k'), { env: fixtureEnv, stdio: ['ignore', 'ignore', 'inherit'] });
}

function count(dir) {
  let n = 0;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop();
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      n++;
      if (e.isDirectory()) stack.push(path.join(d, e.name));
    }
  }
  return n;
}

function time(fn) {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function timeAsync(fn) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function run(argv, opts = {}) {
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

function settle() {
  // Page cache is not dropped: every method runs warm, as on a workstation. sync keeps one method's writeback out of the next.
  spawnSync('sync');
}

ensureCache();
const cached = path.join(cacheDir, 'node_modules');
const entries = count(cached);
const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-bench-')));
const results = [];
const paired = { copy: [], cow: [] };
const note = (name, ms, extra = '', stepMs = undefined) => {
  results.push({ name, ms, extra, stepMs });
  process.stderr.write(
    `bench: ${name}: ${ms.toFixed(0)} ms ${extra}${stepMs === undefined ? '' : ` (provisioning step ${stepMs} ms)`}\n`,
  );
};
let n = 0;
const fresh = () => path.join(work, `d${n++}`);

try {
  // A throwaway repository whose ignored node_modules is the tree. Every row below copies from
  // this same folder, so the baselines and warren read the same files.
  const repo = path.join(work, 'repo');
  const home = path.join(work, 'home');
  fs.mkdirSync(repo);
  const g = (...args) => run(['git', ...args], { cwd: repo });
  g('init', '-q', '-b', 'main');
  g('config', 'user.email', 'bench@example.invalid');
  g('config', 'user.name', 'bench');
  fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\nwarren.yaml\n');
  for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(fixture, f), path.join(repo, f));
  g('add', '-A');
  g('commit', '-q', '-m', 'bench');
  run(['cp', '-a', cached, path.join(repo, 'node_modules')]);
  const src = path.join(repo, 'node_modules');

  // Baselines.
  const measure = (name, fn) => {
    const times = [];
    for (let i = 0; i < runs; i++) {
      settle();
      times.push(time(() => fn(fresh())));
    }
    note(name, median(times), `(median of ${runs})`);
  };
  // cp -a runs again after the warren rows, and the baseline is the median of both halves, so a
  // machine that gets busier or quieter during the run does not tilt every ratio one way.
  const cpTimes = [];
  const cpA = () => {
    for (let i = 0; i < runs; i++) {
      settle();
      cpTimes.push(time(() => run(['cp', '-a', src, fresh()])));
    }
  };
  cpA();
  // BENCH_ONLY=paired: only the paired rows below (copy and a first cow step against cp -a).
  if (!pairedOnly) {
    measure('cp -al', (dst) => run(['cp', '-al', src, dst]));
    measure('symlink', (dst) => fs.symlinkSync(src, dst));
    settle();
    note(
      'Node fs.cpSync',
      time(() => fs.cpSync(src, fresh(), { recursive: true, verbatimSymlinks: true })),
      '(once)',
    );
    settle();
    note(
      'Node fs.cp (async)',
      await timeAsync(() => fs.promises.cp(src, fresh(), { recursive: true, verbatimSymlinks: true })),
      '(once)',
    );
    {
      const dir = fresh();
      fs.mkdirSync(dir);
      for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(fixture, f), path.join(dir, f));
      settle();
      note(
        'npm ci (warm npm cache)',
        time(() => run(['npm', ...npmFlags], { cwd: dir })),
        '(once)',
      );
    }

    const env = { ...process.env, WARREN_HOME: home };
    let task = 0;
    // The floor under any Node command that makes a worktree, in this environment: Node's own
    // start-up and a bare `git worktree add`.
    measure('floor: node -e 0 (Node start-up alone)', () => run(['node', '-e', '0']));
    measure('floor: git worktree add (bare)', (dst) =>
      run(['git', 'worktree', 'add', '-q', '-b', `floor-${path.basename(dst)}`, dst], { cwd: repo }),
    );
    const warrenNew = (mode, extraEnv = {}) => {
      fs.writeFileSync(
        path.join(repo, 'warren.yaml'),
        mode ? `provision:\n  - { path: node_modules, mode: ${mode} }\n` : '',
      );
      const id = `t${task++}`;
      // As a user runs it (no --no-sync: the base has no upstream here, so nothing is fetched).
      const runEnv = { ...env, ...extraEnv };
      for (const [k, v] of Object.entries(runEnv)) if (v === undefined) delete runEnv[k];
      // A provision setting is one the user trusts once (UNTRUSTED_COMMANDS otherwise); untimed.
      run(['node', warrenBin, 'trust', '--yes'], { cwd: repo, env: runEnv });
      settle();
      const ms = time(() => run(['node', warrenBin, 'new', 'feat', id], { cwd: repo, env: runEnv }));
      // The provisioning step alone, as warren recorded it (task.data.provision[].ms).
      const shown = JSON.parse(run(['node', warrenBin, '--json', 'show', id], { cwd: repo, env: runEnv }));
      const step = shown.data.provision?.[0];
      if (mode && step?.mode !== mode) throw new Error(`asked for ${mode}, got ${JSON.stringify(step)}`);
      return { id, ms, stepMs: step?.ms };
    };
    const series = (name, mode, n = runs, extraEnv = {}) => {
      const times = [];
      const steps = [];
      for (let i = 0; i < n; i++) {
        // Workspaces are kept until the end: deleting a 20,000-file copy right before the next copy
        // slows that copy 2-3x on ext4 here, and the cp -a baseline does not delete between runs either.
        const { ms, stepMs } = warrenNew(mode, extraEnv);
        times.push(ms);
        steps.push(stepMs);
      }
      note(name, median(times), `(median of ${n})`, mode ? median(steps) : undefined);
    };
    series('warren new, nothing provisioned', null);
    {
      // The first workspace for a lockfile takes the snapshot: each run in a WARREN_HOME of its own, so each takes one.
      const times = [];
      const steps = [];
      for (let i = 0; i < runs; i++) {
        const first = warrenNew('cow', { WARREN_HOME: path.join(work, `home-first-${i}`) });
        times.push(first.ms);
        steps.push(first.stepMs);
      }
      note(
        'warren new, cow (first time: takes the snapshot)',
        median(times),
        `(median of ${runs}, each a new snapshot)`,
        median(steps),
      );
    }
    warrenNew('cow'); // the snapshot the rows below reuse
    // The target row: cheap, so more runs for a steadier median.
    series('warren new, cow (snapshot exists)', 'cow', Math.max(runs, 7));
    await nonRootRows(repo, work);
    if (process.env.NODE_EXTRA_CA_CERTS) {
      // Node 20 reads and parses the whole CA bundle named here at every start-up, before any of
      // warren's code runs (~40 ms on this machine). warren makes no TLS connections itself.
      series('warren new, cow (snapshot exists), NODE_EXTRA_CA_CERTS unset', 'cow', Math.max(runs, 7), {
        NODE_EXTRA_CA_CERTS: undefined,
      });
    }
    {
      // The same creation through the library, in a process that is already running (an
      // orchestrator embedding warren, or the dashboard): Node's start-up and module loading are
      // paid once, not per workspace.
      fs.writeFileSync(path.join(repo, 'warren.yaml'), 'provision:\n  - { path: node_modules, mode: cow }\n');
      const lib = await import(path.join(root, 'dist', 'index.js'));
      const store = lib.openStore(home);
      const ctx = await lib.openProject(repo, { store });
      const times = [];
      const steps = [];
      for (let i = 0; i < Math.max(runs, 7); i++) {
        settle();
        let task;
        times.push(await timeAsync(async () => (task = await lib.createTask(ctx, { type: 'feat', id: `lib${i}` }))));
        steps.push(task.data.provision[0].ms);
        if (task.data.provision[0].mode !== 'cow')
          throw new Error(`library createTask: asked for cow, got ${JSON.stringify(task.data.provision[0])}`);
      }
      store.close();
      note(
        'createTask (library, in a running process), cow (snapshot exists)',
        median(times),
        `(median of ${times.length})`,
        median(steps),
      );
    }
    if (spawnSync('curl', ['--version']).status === 0) {
      // The same creation asked of a running dashboard (`warren serve`), by a new curl process per
      // workspace: end to end from a shell, without a Node start-up per workspace.
      fs.writeFileSync(path.join(repo, 'warren.yaml'), 'provision:\n  - { path: node_modules, mode: cow }\n');
      const server = await startServe(repo, env);
      try {
        const times = [];
        for (let i = 0; i < Math.max(runs, 7); i++) {
          const id = `http${i}`;
          const body = JSON.stringify({ project: server.project, options: { type: 'feat', id } });
          settle();
          const ms = time(() => {
            const out = run([
              'curl',
              '-sS',
              '--fail-with-body',
              '-H',
              'content-type: application/json',
              '-H',
              `x-warren-token: ${server.token}`,
              '--data-binary',
              body,
              `${server.url}api/actions/new`,
            ]);
            if (JSON.parse(out).result?.state !== 'ready') throw new Error(`dashboard new: ${out}`);
          });
          const shown = JSON.parse(run(['node', warrenBin, '--json', 'show', id], { cwd: repo, env }));
          if (shown.data.provision?.[0]?.mode !== 'cow')
            throw new Error(`dashboard new: asked for cow, got ${JSON.stringify(shown.data.provision)}`);
          times.push(ms);
        }
        note(
          'warren new through a running `warren serve` (curl POST /api/actions/new), cow (snapshot exists)',
          median(times),
          `(median of ${times.length})`,
        );
      } finally {
        await server.stop();
      }
    } else {
      process.stderr.write('bench: skipped the dashboard row: curl is not installed\n');
    }
    series('warren new, copy', 'copy');
    series('warren new, hardlink', 'hardlink');
  }
  {
    // Paired: each round runs cp -a, then warren's copy step, then a first cow step (a new
    // snapshot, in a WARREN_HOME of its own), back to back through the library, and keeps each
    // step's ratio to the cp -a of its own round. A shared machine whose load swings by 2x
    // within a run moves both sides of each ratio alike.
    const lib = await import(path.join(root, 'dist', 'index.js'));
    const rounds = Math.max(runs, 5);
    for (let i = 0; i < rounds; i++) {
      settle();
      const cp = time(() => run(['cp', '-a', src, fresh()]));
      for (const mode of ['copy', 'cow']) {
        fs.writeFileSync(path.join(repo, 'warren.yaml'), `provision:\n  - { path: node_modules, mode: ${mode} }\n`);
        const store = lib.openStore(path.join(work, `home-paired-${mode}-${i}`));
        const ctx = await lib.openProject(repo, { store });
        settle();
        const task = await lib.createTask(ctx, { type: 'feat', id: `paired-${mode}-${i}`, sync: false });
        store.close();
        const step = task.data.provision[0];
        if (step.mode !== mode) throw new Error(`paired: asked for ${mode}, got ${JSON.stringify(step)}`);
        paired[mode].push(step.ms / cp);
        process.stderr.write(
          `bench: paired round ${i + 1}: cp -a ${cp.toFixed(0)} ms, ${mode} step ${step.ms} ms (${(step.ms / cp).toFixed(2)})\n`,
        );
      }
    }
  }
  cpA();
  results.unshift({
    name: 'cp -a',
    ms: median(cpTimes),
    extra: `(median of ${cpTimes.length}: half before, half after the warren rows)`,
  });
  process.stderr.write(`bench: cp -a: ${cpTimes.map((t) => t.toFixed(0)).join(', ')} ms\n`);
} finally {
  // Unmount anything left (a failed run) before deleting.
  const left = mountsUnder(readMounts(), work).sort((a, b) => b.mountPoint.length - a.mountPoint.length);
  for (const m of left) spawnSync('umount', [m.mountPoint]);
  fs.rmSync(work, { recursive: true, force: true });
}

/**
 * Beside the kernel overlay (root): the same cow rows as an unprivileged user (uid 65534), whose
 * layer fuse-overlayfs mounts on the host. A copy of the repository, owned by that user, with a
 * home of its own; skipped, saying why, where the machine cannot switch users or lacks fuse.
 */
async function nonRootRows(repo, work) {
  const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];
  const why =
    process.getuid?.() !== 0
      ? 'not root (cannot switch to uid 65534)'
      : spawnSync('fuse-overlayfs', ['--version']).error
        ? 'fuse-overlayfs is not installed (apt-get install fuse-overlayfs)'
        : null;
  if (why) {
    process.stderr.write(`bench: skipped the non-root fuse-overlayfs rows: ${why}\n`);
    return;
  }
  const dir = path.join(work, 'nobody');
  fs.mkdirSync(dir, { mode: 0o755 });
  fs.chmodSync(work, 0o755);
  const nrepo = path.join(dir, 'repo');
  const nhome = path.join(dir, 'home');
  run(['cp', '-a', repo, nrepo]);
  fs.writeFileSync(path.join(nrepo, 'warren.yaml'), 'provision:\n  - { path: node_modules, mode: cow }\n');
  fs.mkdirSync(nhome);
  run(['chown', '-R', '65534:65534', dir]);
  const env = ['env', `HOME=${nhome}`, `WARREN_HOME=${nhome}`];
  let i = 0;
  const one = () => {
    const id = `nobody${i++}`;
    settle();
    const ms = time(() => run([...asNobody, ...env, 'node', warrenBin, 'new', 'feat', id], { cwd: nrepo }));
    const step = JSON.parse(run([...asNobody, ...env, 'node', warrenBin, '--json', 'show', id], { cwd: nrepo })).data
      .provision?.[0];
    if (step?.method !== 'fuse-overlayfs')
      throw new Error(`non-root cow: expected fuse-overlayfs, got ${JSON.stringify(step)}`);
    return { ms, stepMs: step.ms };
  };
  const first = one();
  note('warren new, cow, not root: fuse-overlayfs (first time: takes the snapshot)', first.ms, '(once)', first.stepMs);
  const times = [];
  const steps = [];
  for (let k = 0; k < Math.max(runs, 7); k++) {
    const r = one();
    times.push(r.ms);
    steps.push(r.stepMs);
  }
  note(
    'warren new, cow, not root: fuse-overlayfs (snapshot exists)',
    median(times),
    `(median of ${times.length})`,
    median(steps),
  );
}

function fmt(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

const base = results.find((r) => r.name === 'cp -a').ms;
const cpus = os.cpus();
const lines = [
  `provisioning benchmark — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.type()} ${os.release()}, ${cpus.length}× ${cpus[0]?.model.trim()}, Node ${process.version}, load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
  `tree: ${fixture} installed with npm ci — ${entries} entries; each warren new is a separate process (end to end)`,
  '',
  '| method | time | × cp -a | provisioning step alone (× cp -a) |',
  '|---|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.name} ${r.extra} | ${fmt(r.ms)} | ${(r.ms / base).toFixed(2)} | ${r.stepMs === undefined ? '' : `${fmt(r.stepMs)} (${(r.stepMs / base).toFixed(2)})`} |`,
  ),
];
lines.push(
  '',
  'paired with cp -a (each round: cp -a, then the step, back to back; the step as warren recorded it):',
  '',
  '| step | rounds | median × cp -a | each round |',
  '|---|---:|---:|---|',
  ...[
    ['copy', paired.copy],
    ['cow, first time (takes the snapshot)', paired.cow],
  ].map(
    ([name, xs]) => `| ${name} | ${xs.length} | ${median(xs).toFixed(2)} | ${xs.map((x) => x.toFixed(2)).join(', ')} |`,
  ),
);
console.log(lines.join('\n'));
