import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { openStore } from '../../src/composition.js';
import { readMounts } from '../../src/system/mounts.js';
import { isHolderAlive, readHolder } from '../../src/util/lockfile.js';
import { BIN, gitIn, type TestRepo } from './repo.js';
import { livingDaemons } from './services.js';

/**
 * Kills at random instants, not only at the named fault points: a real `warren` process is
 * started and SIGKILLed after a delay drawn from a seeded generator (WARREN_KILL_SEED, printed,
 * so a failing trial can be replayed), spread over the part of its life after Node's start-up.
 * Each trial then asks whether the next commands alone (the repair any command runs, then
 * `warren gc`) leave nothing needing a hand: no stray, no orphan branch, no mount, no held lock,
 * no lost commit, and the same command succeeding.
 */

export const SEED = Number(process.env.WARREN_KILL_SEED ?? 20261206);

export { seeded } from './seeded.js';

/** A quota of kills, scaled by WARREN_KILL_SCALE (0.2 runs a fifth of it). */
export const scaled = (n: number): number => Math.ceil(n * Number(process.env.WARREN_KILL_SCALE ?? 1));

/** How many of `op`'s trials killed the command before it ended. */
export const killedSoFar = (trials: readonly Trial[], op: string): number =>
  trials.filter((t) => t.op === op && t.killed).length;

export interface Spawned {
  killed: boolean;
  code: number | null;
  ms: number;
  stderr: string;
}

/** `warren ARGS` as a real process, SIGKILLed after `delayMs` (never, when null). */
export function runKilledAt(repo: TestRepo, args: readonly string[], delayMs: number | null): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: repo.root,
      env: { ...process.env, WARREN_HOME: repo.home },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = delayMs === null ? null : setTimeout(() => child.kill('SIGKILL'), delayMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ killed: signal === 'SIGKILL', code, ms: Date.now() - started, stderr });
    });
  });
}

/** The window kills are drawn from: after `warren --version` would have ended, to the end of an unkilled run. */
export async function killWindow(repo: TestRepo, fullMs: number): Promise<{ from: number; to: number }> {
  const startup = await runKilledAt(repo, ['--version'], null);
  const from = Math.max(0, Math.round(startup.ms * 0.8));
  return { from, to: Math.max(from + 50, Math.round(fullMs * 1.05)) };
}

/**
 * A run that ended before its kill shows the command is quicker than the window: the window's
 * end comes in to it, and so does its start when the run ended before even that (the start-up
 * it was measured from ran on a busier machine), else no later trial would be killed.
 */
export function adapt(window: { from: number; to: number }, run: Spawned): void {
  if (run.killed) return;
  window.from = Math.min(window.from, Math.round(run.ms * 0.5));
  window.to = Math.max(window.from + 50, Math.min(window.to, Math.round(run.ms * 1.05)));
}

export interface Trial {
  op: string;
  n: number;
  delayMs: number;
  killed: boolean;
  /** What the next commands left needing a hand: empty when nothing. */
  problems: string[];
}

/** What the trials found, as a table, and a line of totals; written to artifacts/`name`.md. */
export function report(name: string, trials: readonly Trial[]): string {
  const killed = trials.filter((t) => t.killed).length;
  const bad = trials.filter((t) => t.problems.length > 0);
  const byOp = [...new Set(trials.map((t) => t.op))].map((op) => {
    const mine = trials.filter((t) => t.op === op);
    return `| ${op} | ${mine.length} | ${mine.filter((t) => t.killed).length} | ${mine.filter((t) => t.problems.length > 0).length} |`;
  });
  const text = [
    `random kills (seed ${SEED}): ${trials.length} trial(s), ${killed} killed mid-command, ${bad.length} left needing manual repair`,
    '',
    '| command | trials | killed | needing repair |',
    '|---|---|---|---|',
    ...byOp,
    ...bad.map((t) => `- ${t.op} #${t.n} killed at ${t.delayMs} ms: ${t.problems.join('; ')}`),
    '',
  ].join('\n');
  const dir = path.resolve(import.meta.dirname, '../../artifacts');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${name}.md`), text);
  console.log(text);
  return text;
}

/** Mounts under the test's folder, lock files whose holder is alive, open intents: what nothing may leave behind. */
export function leftBehind(repo: TestRepo, problems: string[]): void {
  const base = path.dirname(repo.root);
  for (const m of readMounts()) if (m.mountPoint.startsWith(`${base}/`)) problems.push(`mount left at ${m.mountPoint}`);
  const locks = path.join(repo.home, 'locks');
  const walk = (dir: string): string[] =>
    fs.existsSync(dir)
      ? fs
          .readdirSync(dir, { withFileTypes: true })
          .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]))
      : [];
  for (const file of [...walk(locks), path.join(repo.root, '.git', 'warren-repo.lock')]) {
    const holder = readHolder(file);
    if (holder && isHolderAlive(holder))
      problems.push(`lock ${path.relative(locks, file)} held by live pid ${holder.pid}`);
  }
}

/** Strays `scan` still lists (after the repair and `gc`), as words. */
export async function strays(repo: TestRepo, problems: string[]): Promise<void> {
  const scan = await repo.warrenJson<{ strays: { kind: string; path?: string; branch?: string; reason: string }[] }>(
    'scan',
  );
  expect(scan.code, scan.stderr).toBe(0);
  for (const s of scan.json.strays) problems.push(`stray ${s.kind} ${s.path ?? s.branch ?? ''}: ${s.reason}`);
}

/** Every commit in `before` still reachable from some ref. */
export function noCommitLost(root: string, before: ReadonlySet<string>, problems: string[]): void {
  const now = new Set(gitIn(root, 'rev-list', '--all').split('\n').filter(Boolean));
  for (const c of before) if (!now.has(c)) problems.push(`commit ${c.slice(0, 12)} is no longer reachable`);
}

export function reachable(root: string): Set<string> {
  return new Set(gitIn(root, 'rev-list', '--all').split('\n').filter(Boolean));
}

/** For a trial that left something: the killed command's stderr and the repository's last events, to replay it from. */
export function whatHappened(repo: TestRepo, id: string, stderr: string): string {
  const store = openStore(repo.home);
  try {
    const rows = store.db
      .prepare('SELECT kind, task_id AS task, message FROM events ORDER BY seq DESC LIMIT 10')
      .all() as { kind: string; task: string | null; message: string }[];
    return `(task ${id}; killed command's stderr: ${JSON.stringify(stderr.trim())}; last events, newest first: ${rows.map((r) => `${r.kind}${r.task ? ` ${r.task}` : ''}: ${r.message}`).join(' | ')})`;
  } finally {
    store.close();
  }
}

/** Every service daemon still running under WARREN_HOME belongs to a task that is still listed. */
export async function noServiceOfAGoneTask(repo: TestRepo, problems: string[]): Promise<void> {
  const live = new Set((await repo.warrenJson<{ id: string }[]>('list')).json.map((t) => t.id));
  const root = path.join(repo.home, 'services');
  // services/postgres is warren's own server, no task's (src/services/pg-server.ts clusterDir).
  for (const project of fs.existsSync(root) ? fs.readdirSync(root).filter((p) => p !== 'postgres') : []) {
    for (const id of fs.readdirSync(path.join(root, project)).filter((n) => !n.startsWith('.'))) {
      if (live.has(id)) continue;
      const pids = livingDaemons(repo.home, path.join(root, project, id));
      if (pids.length > 0) problems.push(`service(s) of gone task ${id} still running: pid(s) ${pids.join(', ')}`);
    }
  }
}
