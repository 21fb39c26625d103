// What `warren diff` costs on a large change, against git's own commands on the same workspace:
//  - a repository of BENCH_DIFF_FILES tracked files (default 20,000); the task commits changes to
//    a tenth of them, then leaves as many uncommitted edits and 500 untracked files;
//  - baseline: `git status --porcelain` plus `git diff --stat <fork point>` in the workspace
//    (what a user would run to see the same, without the untracked files' contents);
//  - warren: `warren diff --stat` and `warren --json diff` (every patch), each a new process.
import fs from 'node:fs';
import path from 'node:path';
import { BIN, machine, median, printTable, run, sh, time, tmp } from './lib.js';

const FILES = Number(process.env.BENCH_DIFF_FILES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

function bigRepo(dir) {
  fs.mkdirSync(dir, { recursive: true });
  sh('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  sh('git', ['config', 'user.name', 'bench'], { cwd: dir });
  sh('git', ['config', 'user.email', 'bench@example.invalid'], { cwd: dir });
  for (let i = 0; i < FILES; i++) {
    const sub = path.join(dir, 'src', `d${i % 100}`);
    if (i < 100) fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n${'line\n'.repeat(20)}`);
  }
  sh('git', ['add', '-A'], { cwd: dir });
  sh('git', ['commit', '-q', '-m', 'initial'], { cwd: dir });
  return dir;
}

export async function benchDiff() {
  const base = tmp('warren-bench-diff-');
  const repo = bigRepo(path.join(base, 'repo'));
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  const made = JSON.parse(sh(process.execPath, [BIN, '--json', 'new', 'feat', 'big'], { cwd: repo, env }));
  const ws = made.path;
  const tenth = Math.floor(FILES / 10);
  for (let i = 0; i < tenth; i++)
    fs.appendFileSync(path.join(ws, 'src', `d${i % 100}`, `f${i}.txt`), 'committed change\n');
  sh(process.execPath, [BIN, 'checkpoint', 'big', '-m', 'many changes'], { cwd: repo, env });
  for (let i = tenth; i < 2 * tenth; i++)
    fs.appendFileSync(path.join(ws, 'src', `d${i % 100}`, `f${i}.txt`), 'uncommitted change\n');
  fs.mkdirSync(path.join(ws, 'new'));
  for (let i = 0; i < 500; i++) fs.writeFileSync(path.join(ws, 'new', `n${i}.txt`), `new ${i}\n`);
  const fork = sh('git', ['merge-base', 'HEAD', 'main'], { cwd: ws }).trim();

  const rows = { git: [], stat: [], json: [] };
  let files = 0;
  for (let r = 0; r < ROUNDS; r++) {
    rows.git.push(
      (
        await time(async () => {
          await run('git', ['status', '--porcelain'], { cwd: ws });
          await run('git', ['diff', '--stat', fork], { cwd: ws });
        })
      ).ms,
    );
    rows.stat.push((await time(() => run(process.execPath, [BIN, 'diff', 'big', '--stat'], { cwd: repo, env }))).ms);
    rows.json.push((await time(() => run(process.execPath, [BIN, '--json', 'diff', 'big'], { cwd: repo, env }))).ms);
  }
  files = JSON.parse(
    sh(process.execPath, [BIN, '--json', 'diff', 'big', '--stat'], { cwd: repo, env, maxBuffer: 1 << 28 }),
  ).files.length;
  printTable(
    `a task that changed ${2 * tenth} of ${FILES} tracked files (half committed) and added 500 untracked: median of ${ROUNDS} (${machine()})`,
    [
      { name: 'git status --porcelain + git diff --stat (baseline)', ms: median(rows.git) },
      { name: 'warren diff --stat', ms: median(rows.stat), note: `${files} files` },
      { name: 'warren --json diff (every patch)', ms: median(rows.json) },
    ],
    'git status --porcelain + git diff --stat (baseline)',
  );
  fs.rmSync(base, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) await benchDiff();
