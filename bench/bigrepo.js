// Big-repository benchmark: `git worktree add` against `warren new` with `checkout: cow`, on
// generated repositories, measured in the same run. Not a test: prints numbers, never fails on a
// slow machine. Run as root (kernel overlay); as another user it measures fuse-overlayfs.
//
//   npm run bench bigrepo                          (builds first; 20k, 100k and 300k files)
//   BENCH_SIZES=1000,5000,20000 BENCH_RUNS=3 node bench/bigrepo.js
//
// Per size: time per workspace, disk per workspace (du of what the workspace adds), the first
// `git status` in it; the snapshot (once per base commit) made in full and from the previous
// one plus the changed paths; and, for the CLI, the floor (Node start-up plus a bare
// `git worktree add`) with warren's distance from it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mountsUnder, readMounts } from '../dist/system/mounts.js';

const here = path.dirname(new URL(import.meta.url).pathname);
const warrenBin = path.join(here, '..', 'bin/warren.js');
const sizes = (process.env.BENCH_SIZES ?? '20000,100000,300000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 3);
/** Bytes per generated file: the measured repository averaged 3.9 KB (393 MB / 100k). */
const FILE_BYTES = Number(process.env.BENCH_FILE_BYTES ?? 4000);

function run(argv, opts = {}) {
  const r = spawnSync(argv[0], argv.slice(1), {
    stdio: ['pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    ...opts,
  });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}
function time(fn) {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
const settle = () => spawnSync('sync');
const duKiB = (...dirs) =>
  Number(
    run(['du', '-sk', '--total', ...dirs])
      .trim()
      .split('\n')
      .pop()
      .split('\t')[0],
  );
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const mib = (kib) => `${(kib / 1024).toFixed(kib < 1024 ? 2 : 0)} MiB`;

/** A commit of `n` files of FILE_BYTES each in 100 folders, through git fast-import (no files written). */
function generate(repo, n) {
  fs.mkdirSync(repo, { recursive: true });
  run(['git', 'init', '-q', '-b', 'main', repo]);
  for (const [k, v] of [
    ['user.email', 'bench@example.invalid'],
    ['user.name', 'bench'],
    ['gc.auto', '0'],
  ])
    run(['git', 'config', k, v], { cwd: repo });
  // The stream goes through a file: at 300,000 files it is over a gigabyte, more than one string can hold.
  const streamFile = path.join(path.dirname(repo), 'fast-import.stream');
  const fd = fs.openSync(streamFile, 'w');
  const filler = 'warren bench line of text, compressible like source code\n';
  for (let i = 0; i < n; i++) {
    const body = `file ${i}\n${filler.repeat(Math.ceil(FILE_BYTES / filler.length))}`.slice(0, FILE_BYTES);
    fs.writeSync(fd, `blob\nmark :${i + 1}\ndata ${Buffer.byteLength(body)}\n${body}\n`);
  }
  const date = Math.floor(Date.now() / 1000);
  fs.writeSync(fd, `commit refs/heads/main\ncommitter bench <bench@example.invalid> ${date} +0000\ndata 4\nbase\n`);
  for (let i = 0; i < n; i++) fs.writeSync(fd, `M 100644 :${i + 1} d${i % 100}/f${i}.txt\n`);
  fs.writeSync(fd, `M 100644 inline warren.yaml\ndata 14\ncheckout: cow\n\n`);
  fs.closeSync(fd);
  const input = fs.openSync(streamFile, 'r');
  try {
    run(['git', 'fast-import', '--quiet'], { cwd: repo, stdio: [input, 'pipe', 'pipe'] });
  } finally {
    fs.closeSync(input);
    fs.rmSync(streamFile, { force: true });
  }
  run(['git', 'checkout', '-q', '-f', 'main'], { cwd: repo });
}

/** Moves main by `k` changed files (a typical landed change), returning how long git took to commit it. */
function moveBase(repo, k, round) {
  for (let i = 0; i < k; i++)
    fs.writeFileSync(path.join(repo, `d${i % 100}`, `f${i}.txt`), `changed in round ${round}\n`);
  run(['git', 'commit', '-qam', `round ${round}`], { cwd: repo });
}

/** The time warren recorded for making a snapshot, from its event's message. */
function snapshotMs(event) {
  return Number(/ in (\d+) ms/.exec(event?.message ?? '')?.[1] ?? NaN);
}

const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-bigrepo-')));
const rows = [];
try {
  for (const n of sizes) {
    const repo = path.join(work, `r${n}`);
    const home = path.join(work, `home${n}`);
    const env = { ...process.env, WARREN_HOME: home };
    process.stderr.write(`bench: generating ${n} files…\n`);
    generate(repo, n);
    const bytes = duKiB(repo) - duKiB(path.join(repo, '.git'));
    let k = 0;
    const status = (ws) => time(() => run(['git', 'status', '--porcelain'], { cwd: ws }));

    // Baseline: a bare git worktree add, and the floor under a Node CLI that makes one.
    const gitTimes = [];
    const gitStatus = [];
    let gitDisk = 0;
    for (let i = 0; i < runs; i++) {
      const ws = path.join(work, `g${n}-${i}`);
      settle();
      gitTimes.push(time(() => run(['git', 'worktree', 'add', '-q', '-b', `bare-${i}`, ws, 'main'], { cwd: repo })));
      gitStatus.push(status(ws));
      gitDisk = duKiB(ws);
    }
    const nodeStart = median([0, 1, 2].map(() => time(() => run(['node', '-e', '0']))));

    // warren new, checkout: cow. The first makes the snapshot (once per base commit).
    const newCow = (id) => {
      settle();
      const ms = time(() => run(['node', warrenBin, 'new', 'feat', id, '--no-sync'], { cwd: repo, env }));
      const shown = JSON.parse(run(['node', warrenBin, '--json', 'show', id], { cwd: repo, env }));
      if (shown.data.checkout?.mode !== 'cow')
        throw new Error(
          `asked for cow, got ${JSON.stringify(shown.data.checkout)}: ${JSON.stringify(shown.events.slice(-3))}`,
        );
      return { ms, ws: shown.path, upper: path.dirname(shown.data.checkout.upper), events: shown.events };
    };
    const first = newCow(`c${k++}`);
    const full = first.events.find((e) => e.kind === 'checkout.snapshot');
    const cowTimes = [];
    const cowStatus = [];
    let cowDisk = 0;
    for (let i = 0; i < Math.max(runs, 5); i++) {
      const made = newCow(`c${k++}`);
      cowTimes.push(made.ms);
      cowStatus.push(status(made.ws));
      cowDisk = duKiB(made.upper);
    }
    // warren new with checkout: git (the working copy of warren.yaml says so; warren reads that file): the break-even for `checkout: auto`.
    fs.writeFileSync(path.join(repo, 'warren.yaml'), 'checkout: git\n');
    const warrenGit = [];
    for (let i = 0; i < runs; i++) {
      settle();
      const id = `w${k++}`;
      warrenGit.push(time(() => run(['node', warrenBin, 'new', 'feat', id, '--no-sync'], { cwd: repo, env })));
    }
    run(['git', 'checkout', '-q', '--', 'warren.yaml'], { cwd: repo });
    // The base moves by 100 files: the next snapshot is built from this one.
    moveBase(repo, 100, 1);
    const moved = newCow(`c${k++}`);
    const incremental = moved.events.find((e) => e.kind === 'checkout.snapshot');

    const row = {
      n,
      mib: bytes / 1024,
      git: median(gitTimes),
      gitStatus: median(gitStatus),
      gitDisk,
      cow: median(cowTimes),
      warrenGit: median(warrenGit),
      cowStatus: median(cowStatus),
      cowDisk,
      floor: nodeStart + median(gitTimes),
      snapFull: snapshotMs(full),
      snapIncr: snapshotMs(incremental),
      changed: Number(/(\d+) changed paths/.exec(incremental?.message ?? '')?.[1] ?? NaN),
      firstCow: first.ms,
    };
    rows.push(row);
    process.stderr.write(`bench: ${JSON.stringify(row)}\n`);
    // Workspaces off before the next size (mounts first; this is a benchmark's own folder).
    for (const m of mountsUnder(readMounts(), work).sort((a, b) => b.mountPoint.length - a.mountPoint.length))
      spawnSync('umount', [m.mountPoint]);
    fs.rmSync(repo, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
    for (const name of fs.readdirSync(work)) fs.rmSync(path.join(work, name), { recursive: true, force: true });
  }
} finally {
  for (const m of mountsUnder(readMounts(), work).sort((a, b) => b.mountPoint.length - a.mountPoint.length))
    spawnSync('umount', [m.mountPoint]);
  fs.rmSync(work, { recursive: true, force: true });
}

const cpus = os.cpus();
console.log(
  [
    `big-repository benchmark — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.type()} ${os.release()}, ${cpus.length}× ${cpus[0]?.model.trim()}, Node ${process.version}, ${process.getuid?.() === 0 ? 'root (kernel overlay)' : 'not root (fuse-overlayfs)'}, load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    `each workspace: git = a bare \`git worktree add\`; cow = \`warren new\` (a separate Node process, end to end) with \`checkout: cow\`, snapshot already made; medians of ${runs} and ${Math.max(runs, 5)}`,
    '',
    '| tracked files | tree | git worktree add | warren new, checkout: git | warren new, cow | × git worktree add | floor (node + bare add) | cow − floor | disk per workspace: git / cow | first git status: git / cow | snapshot: full / from previous (changed paths) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.n} | ${mib(r.mib * 1024)} | ${fmt(r.git)} | ${fmt(r.warrenGit)} | ${fmt(r.cow)} | ${(r.cow / r.git).toFixed(3)} | ${fmt(r.floor)} | ${fmt(r.cow - r.floor)} | ${mib(r.gitDisk)} / ${mib(r.cowDisk)} | ${fmt(r.gitStatus)} / ${fmt(r.cowStatus)} | ${fmt(r.snapFull)} / ${fmt(r.snapIncr)} (${r.changed}) |`,
    ),
  ].join('\n'),
);
