import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN } from './repo.js';

/** Process facts read from /proc, for tests that prove what is (not) running by pid. */

/** Polls until `file` exists (the process tree says it is ready); fails after `timeoutMs`. */
type Ended = { code: number | null; stdout: string; stderr: string };

export async function waitForFile(file: string, timeoutMs = 30_000, run?: { done: Promise<Ended> }): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const seen: { ended: Ended | null } = { ended: null };
  void run?.done.then((r) => (seen.ended = r));
  while (!fs.existsSync(file)) {
    // A run that ended without making the file will never make it: say why at once.
    const ended = seen.ended;
    if (ended)
      throw new Error(
        `the run ended (exit ${String(ended.code)}) before ${file} appeared:\n${ended.stdout}${ended.stderr}`,
      );
    if (Date.now() > deadline) throw new Error(`${file} did not appear within ${timeoutMs}ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Live (non-zombie) processes whose environment has KEY=VALUE. */
export function pidsWithEnv(key: string, value: string): number[] {
  const needle = `${key}=${value}`;
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (env.includes(needle) && alive(Number(name))) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * Ends the podman API services (`podman system service`) that warren started for `home` (their
 * environment carries its WARREN_HOME), and waits for them. Left alone, one ends on its own
 * after two idle minutes — after the test removed `home` — and a rootless one writes its storage
 * folders into that path again as it goes (a `warren-test-*` folder of uid 65534's was left by
 * every full run).
 */
export async function stopPodmanServices(home: string): Promise<void> {
  const services = pidsWithEnv('WARREN_HOME', home).filter((pid) => {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return path.basename(argv[0] ?? '') === 'podman' && argv[1] === 'system' && argv[2] === 'service';
    } catch {
      return false;
    }
  });
  for (const pid of services) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
  await waitUntilGone(services, 30_000);
}

export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Polls until none of `pids` is alive; returns the ones still alive after `timeoutMs`. */
export async function waitUntilGone(pids: readonly number[], timeoutMs = 5000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts the real CLI without waiting, for tests that signal warren itself. */
export function startCli(
  args: readonly string[],
  opts: { cwd: string; home: string; env?: Record<string, string> },
): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
} {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, WARREN_HOME: opts.home, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}
