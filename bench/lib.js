// Shared helpers for benchmarks: temp repos, timing, and ratio tables. Benchmarks print ratios
// against a baseline measured in the same run; they never fail on a slow machine.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.join(ROOT, 'bin', 'warren.js');

export function tmp(prefix = 'warren-bench-') {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

/** A repository on main with `files` small tracked files and git identity set. */
export function makeRepo(dir, files = 200) {
  fs.mkdirSync(dir, { recursive: true });
  sh('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  sh('git', ['config', 'user.name', 'bench'], { cwd: dir });
  sh('git', ['config', 'user.email', 'bench@example.invalid'], { cwd: dir });
  sh('git', ['config', 'gc.auto', '0'], { cwd: dir });
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, 'src', `d${i % 10}`);
    fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n`.repeat(20));
  }
  sh('git', ['add', '-A'], { cwd: dir });
  sh('git', ['commit', '-q', '-m', 'initial'], { cwd: dir });
  return dir;
}

/** Runs a command and resolves with its exit code and stderr (never rejects). */
export function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...opts });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** A bound `warren …` for one repository and environment: runs synchronously, throws with its output on a non-zero exit, returns stdout. */
export function warrenIn(cwd, env) {
  return (...args) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`warren ${args.join(' ')} failed: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
}

/** Milliseconds a synchronous `fn` takes. */
export function msOf(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export async function time(fn) {
  const start = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Prints `rows` of {name, ms, note?} with ratios against the row named `baseline`. */
export function printTable(title, rows, baseline) {
  const base = rows.find((r) => r.name === baseline);
  console.log(`\n${title}`);
  console.log(`${'case'.padEnd(52)} ${'time'.padStart(10)} ${`× ${baseline}`.padStart(24)}`);
  for (const r of rows) {
    const ratio = base ? (r.ms / base.ms).toFixed(2) : '-';
    console.log(
      `${r.name.padEnd(52)} ${`${r.ms.toFixed(1)} ms`.padStart(10)} ${ratio.padStart(24)}${r.note ? `  ${r.note}` : ''}`,
    );
  }
}

export function machine() {
  return `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, ${sh('git', ['--version']).trim()}, ${new Date().toISOString().slice(0, 10)}`;
}

/** A `warren serve` on a free port in `repo`, with its token (from the URL it prints) and the repository's key. */
export async function startServe(repo, env, bin = BIN) {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0'], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const printed = await new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const m = /warren dashboard: (http:\/\/\S+)/.exec(out);
      if (m) resolve(new URL(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`warren serve exited ${code}: ${out}`)));
  });
  const url = `${printed.origin}/`;
  // A baseline built from before the token moved into the URL served it in the page instead.
  const token =
    printed.searchParams.get('token') ??
    /name="warren-token" content="([0-9a-f]{64})"/.exec(await (await fetch(url)).text())?.[1];
  const meta = await (await fetch(`${url}api/meta`, { headers: { 'x-warren-token': token } })).json();
  const project = meta.project;
  if (!token || !project) throw new Error(`warren serve: no token or project (${JSON.stringify(meta)})`);
  const stop = () =>
    new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  return { url, token, project, stop };
}
