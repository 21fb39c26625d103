import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { LIFECYCLE, OPERATIONS } from '../src/composition.js';
import type { IntentOp } from '../src/state/intents.js';
import { openStore } from '../src/composition.js';
import { readMounts } from '../src/system/mounts.js';
import { isHolderAlive, readHolder, tryAcquire } from '../src/util/lockfile.js';
import { faultPoints } from '../src/workspace/operation.js';
import { fullTierOnly } from './helpers/tier.js';
import { BIN, gitIn, makeRepo, type TestRepo } from './helpers/repo.js';
import { makeNodeModules, unmountUnder } from './helpers/tree.js';

/**
 * A crash at any step leaves a state the next command repairs. For every named step of every
 * mutating command: kill warren there with SIGKILL (the WARREN_FAULT seam), let the next command
 * repair it, and check that no commit was lost, the main checkout's HEAD, index and files agree,
 * no mount and no lock is left behind, and the same operation then reaches its goal without a
 * manual step. The matrix of what happened is printed at the end (artifacts/crash-matrix.md).
 */

interface Row {
  op: string;
  step: string;
  killed: boolean;
  recovery: string;
  then: string;
}
const matrix: Row[] = [];

afterAll(() => {
  if (matrix.length === 0) return;
  const lines = [
    '| command | killed at step | killed | recovery | then |',
    '|---|---|---|---|---|',
    ...matrix.map((r) => `| ${r.op} | ${r.step} | ${r.killed ? 'yes' : 'NO'} | ${r.recovery} | ${r.then} |`),
  ];
  const summary = `${matrix.length} step(s) of ${new Set(matrix.map((r) => r.op)).size} commands: ${matrix.filter((r) => r.killed).length} killed, ${matrix.filter((r) => r.then.startsWith('ok')).length} recovered`;
  const text = `${lines.join('\n')}\n\n${summary}\n`;
  const dir = path.resolve(import.meta.dirname, '../artifacts');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'crash-matrix.md'), text);
  console.log(`crash matrix\n${text}`);
});

/** The command line of each operation, on task `k` (gc collects the vanished task `v`); a leading `node:` runs node itself. */
const COMMAND: Record<IntentOp, string[]> = {
  new: ['new', 'feat', 'k'],
  rm: ['rm', 'k', '--delete-branch'],
  checkpoint: ['checkpoint', 'k', '-m', 'work'],
  provision: ['provision', 'k', '--refresh'],
  gc: ['gc'],
  // The merge queue's processor: `land` works the queue when nobody else does.
  queue: ['land', 'k'],
  discard: ['rm', 'k', '--discard'],
  restore: ['restore', 'k'],
  // A task whose base moved: its commit rebased onto the base's new one.
  sync: ['sync', 'k'],
};

function runWith(
  repo: TestRepo,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const argv = args[0] === 'node:' ? args.slice(1) : [BIN, ...args];
    const child = spawn(process.execPath, argv, {
      cwd: repo.root,
      env: { ...process.env, WARREN_HOME: repo.home, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A step before or after the crash: the command line, run in this test's process (test/helpers/repo.ts). */
async function ok(repo: TestRepo, ...args: string[]): Promise<void> {
  const r = await repo.warren(...args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/** The operation run again after the repair, in this process. */
function runAgain(repo: TestRepo, op: IntentOp): Promise<{ code: number; stderr: string }> {
  return repo.warren(...COMMAND[op]);
}

function crashRepo(checkout: 'git' | 'cow' = 'git'): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'node_modules/\n.setup-ran\n',
      'package-lock.json': '{"lockfileVersion":3,"packages":{}}\n',
      // cow: a real overlay as root (so "no mount left behind" means something); elsewhere it falls back to a copy.
      // A gate, so that the merge queue has a gating step to be killed at.
      // `checkout: cow`: the workspace itself is an overlay on a shared snapshot, with the cow node_modules inside it.
      'warren.yaml': `provision:\n  - { path: node_modules, mode: cow }\nsetup:\n  - { id: mark, run: "touch .setup-ran" }\nverify:\n  - { id: ok, run: "true" }\n${checkout === 'cow' ? 'checkout: cow\n' : ''}`,
    },
  });
  makeNodeModules(repo.root);
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  return repo;
}

/** What must be true before the operation runs. */
async function prepare(repo: TestRepo, op: IntentOp): Promise<void> {
  if (op === 'new') return;
  await ok(repo, 'new', 'feat', 'k');
  const ws = workspace(repo, 'k');
  if (op === 'checkpoint' || op === 'queue') fs.writeFileSync(path.join(ws, 'work.txt'), "the task's work\n");
  if (op === 'queue') await ok(repo, 'checkpoint', 'k', '-m', 'work');
  if (op === 'rm') {
    // Work on the branch that landed elsewhere, so --delete-branch may delete it.
    fs.writeFileSync(path.join(ws, 'work.txt'), 'x\n');
    await ok(repo, 'checkpoint', 'k', '-m', 'work');
    repo.git('branch', 'keep-k', 'feat/k');
  }
  if (op === 'discard' || op === 'restore') {
    // Uncommitted, untracked and unlanded work: all of it must survive either way.
    fs.writeFileSync(path.join(ws, 'work.txt'), 'committed\n');
    await ok(repo, 'checkpoint', 'k', '-m', 'work');
    fs.writeFileSync(path.join(ws, 'work.txt'), 'changed\n');
    fs.writeFileSync(path.join(ws, 'untracked.txt'), 'new\n');
  }
  if (op === 'restore') await ok(repo, 'rm', 'k', '--discard');
  if (op === 'sync') {
    fs.writeFileSync(path.join(ws, 'work.txt'), 'work\n');
    await ok(repo, 'checkpoint', 'k', '-m', 'work');
    repo.write('base.txt', 'the base moved\n');
    repo.commit('the base moves');
  }
  if (op === 'gc') {
    await ok(repo, 'new', 'feat', 'v');
    const v = workspace(repo, 'v');
    unmountUnder(v);
    fs.rmSync(v, { recursive: true, force: true });
    // Gone for good, git's record too: a vanished task gc forgets (a live task whose folder is
    // merely away, with git's record kept, is displaced and spared instead).
    repo.git('worktree', 'prune');
  }
}

async function listJson(repo: TestRepo): Promise<{ id: string; state: string; path: string }[]> {
  return (await repo.warrenJson<{ id: string; state: string; path: string }[]>('list')).json;
}

/** What the repair recorded (the newest recovery event), and how many intents are still open. */
function recoveryFacts(repo: TestRepo): { outcome: string | null; open: number } {
  const store = openStore(repo.home);
  try {
    const row = store.db
      .prepare(
        "SELECT data FROM events WHERE kind IN ('intent.recovered', 'intent.recovery_failed') ORDER BY seq DESC LIMIT 1",
      )
      .get() as { data: string } | undefined;
    const open = (store.db.prepare('SELECT COUNT(*) AS n FROM intents').get() as { n: number }).n;
    return { outcome: row ? (JSON.parse(row.data) as { outcome: string }).outcome : null, open };
  } finally {
    store.close();
  }
}

function workspace(repo: TestRepo, id: string): string {
  const root = path.join(repo.home, 'worktrees');
  const project = fs.readdirSync(root)[0] ?? '';
  return path.join(root, project, id);
}

/** Has the operation's goal been reached? */
async function goalReached(
  repo: TestRepo,
  op: IntentOp,
  given?: Awaited<ReturnType<typeof listJson>>,
): Promise<boolean> {
  const tasks = given ?? (await listJson(repo));
  const k = tasks.find((t) => t.id === 'k');
  switch (op) {
    case 'new':
      return k?.state === 'ready' && fs.existsSync(path.join(k.path, '.setup-ran'));
    case 'rm':
      return k === undefined && gitIn(repo.root, 'branch', '--list', 'feat/k') === '';
    case 'checkpoint':
      return (
        k !== undefined &&
        gitIn(k.path, 'log', '-1', '--format=%s') === 'work' &&
        gitIn(k.path, 'status', '--porcelain') === ''
      );
    case 'queue':
      // Landed once: one squash commit on the base.
      return (
        k?.state === 'landed' &&
        fs.existsSync(path.join(repo.root, 'work.txt')) &&
        gitIn(repo.root, 'log', '--format=%s')
          .split('\n')
          .filter((s) => s === 'work').length === 1
      );
    case 'provision':
      return k !== undefined && fs.existsSync(path.join(k.path, 'node_modules', 'left-pad', 'index.js'));
    case 'gc':
      return !tasks.some((t) => t.id === 'v');
    case 'discard':
      return (
        k === undefined &&
        gitIn(repo.root, 'branch', '--list', 'feat/k') === '' &&
        gitIn(repo.root, 'for-each-ref', 'refs/warren/archive/k/') !== ''
      );
    case 'sync':
      // The base's commit is in the branch, the task's own on top, the workspace clean.
      return (
        k !== undefined &&
        gitIn(repo.root, 'merge-base', 'main', 'feat/k') === gitIn(repo.root, 'rev-parse', 'main') &&
        gitIn(k.path, 'log', '-1', '--format=%s') === 'work' &&
        fs.existsSync(path.join(k.path, 'base.txt')) &&
        gitIn(k.path, 'status', '--porcelain') === ''
      );
    case 'restore':
      return (
        k?.state === 'ready' &&
        fs.readFileSync(path.join(k.path, 'work.txt'), 'utf8') === 'changed\n' &&
        fs.readFileSync(path.join(k.path, 'untracked.txt'), 'utf8') === 'new\n' &&
        gitIn(k.path, 'status', '--porcelain') === 'M work.txt\n?? untracked.txt'
      );
  }
}

function reachable(root: string): Set<string> {
  return new Set(gitIn(root, 'rev-list', '--all').split('\n').filter(Boolean));
}

/** Every fault point of every operation's declaration (src/composition.ts lists them). */
const OPS = Object.keys(OPERATIONS) as IntentOp[];
const CASES = OPS.flatMap((op) =>
  faultPoints(OPERATIONS[op], LIFECYCLE).map((step) => ({ op, step, checkout: 'git' as const })),
);
/**
 * The same with a copy-on-write checkout (`checkout: cow`): the operations that make, release
 * or collect one — e.g. `rm` killed right after the checkout's overlay was released, before git
 * forgot the worktree. (A restore always uses `git worktree add`; land and checkpoint act
 * inside the workspace whatever its checkout is.)
 */
const COW_OPS: readonly IntentOp[] = ['new', 'rm', 'discard', 'gc', 'provision'];
const COW_CASES = COW_OPS.flatMap((op) =>
  faultPoints(OPERATIONS[op], LIFECYCLE).map((step) => ({ op, step, checkout: 'cow' as const })),
);

describe.skipIf(fullTierOnly(import.meta.filename, 'the crash matrix'))(
  'a crash at any step of any mutating command',
  () => {
    it.each([...CASES, ...COW_CASES])(
      '$op killed at $step (checkout: $checkout): the next command repairs it',
      async ({ op, step, checkout }) => {
        const repo = crashRepo(checkout);
        await prepare(repo, op);
        const before = reachable(repo.root);

        const crashed = await runWith(repo, COMMAND[op], { WARREN_FAULT: `${op}:${step}` });
        const row: Row = {
          op: checkout === 'cow' ? `${op} (checkout: cow)` : op,
          step,
          killed: crashed.signal === 'SIGKILL',
          recovery: '-',
          then: '',
        };
        matrix.push(row);
        expect(crashed.signal, `${op} did not reach ${step}: exit ${crashed.code}\n${crashed.stderr}`).toBe('SIGKILL');

        // The next command (any: scan here) repairs it.
        const scan = await repo.warren('--json', 'scan');
        expect(scan.code, scan.stderr).toBe(0);
        const facts = recoveryFacts(repo);
        row.recovery = facts.outcome ?? 'none needed';
        expect(scan.stderr).not.toMatch(/could not repair/);
        expect(facts.open, 'an intent is still open after the repair').toBe(0);

        // No commit lost.
        const after = reachable(repo.root);
        for (const c of before) expect(after.has(c), `commit ${c} lost`).toBe(true);
        // The main checkout's HEAD, index and files agree.
        expect(gitIn(repo.root, 'status', '--porcelain', '--untracked-files=no')).toBe('');
        // No lock blocks: one a dead process left is taken over by the next taker.
        const locks = path.join(repo.home, 'locks');
        for (const dir of fs.existsSync(locks) ? fs.readdirSync(locks) : []) {
          for (const f of fs.readdirSync(path.join(locks, dir)).filter((n) => n.endsWith('.lock'))) {
            const file = path.join(locks, dir, f);
            const holder = readHolder(file);
            if (!holder || isHolderAlive(holder)) continue;
            const taken = tryAcquire(file, 'crash test');
            expect(taken.ok, `lock ${f} of dead pid ${holder.pid} blocks`).toBe(true);
            if (taken.ok) taken.lock.release();
          }
        }
        // No mount of a task that no longer exists.
        const tasks = await listJson(repo);
        const live = tasks.map((t) => t.path);
        const strayMounts = readMounts().filter(
          (m) =>
            m.mountPoint.startsWith(repo.home) &&
            !live.some((p) => m.mountPoint === p || m.mountPoint.startsWith(`${p}/`)),
        );
        expect(strayMounts.map((m) => m.mountPoint)).toEqual([]);

        // The same operation reaches its goal without a manual step: already, or when run again.
        if (await goalReached(repo, op, tasks)) {
          row.then = 'ok: goal already reached';
        } else {
          const again = await runAgain(repo, op);
          expect(again.code, `${COMMAND[op].join(' ')} again: ${again.stderr}`).toBe(0);
          expect(await goalReached(repo, op)).toBe(true);
          row.then = 'ok: ran again';
        }
      },
    );
  },
);
