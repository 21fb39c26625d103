import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBounded, startBounded } from '../../src/system/spawn.js';
import { tmpDir } from '../helpers/repo.js';

/** The one spawn primitive every process of warren's goes through: bounded, and honest about how it ended. */

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
  return !alive(pid);
}

function readPid(file: string): number {
  return Number(fs.readFileSync(file, 'utf8').trim());
}

async function waitFor(file: string): Promise<void> {
  for (let i = 0; i < 250 && !(fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== ''); i++)
    await new Promise((r) => setTimeout(r, 20));
}

describe('runBounded', () => {
  it('collects output, writes stdin, and reports the exit code', async () => {
    const r = await runBounded({
      argv: ['sh', '-c', 'cat; echo err >&2; exit 3'],
      stdin: 'hello',
      stdout: 'collect',
      stderr: 'collect',
    });
    expect(r).toMatchObject({
      exitCode: 3,
      signal: null,
      timedOut: false,
      aborted: false,
      forced: false,
      spawnError: null,
    });
    expect(r.stdout.toString()).toBe('hello');
    expect(r.stderr.toString()).toBe('err\n');
  });

  it('says a program could not start instead of throwing', async () => {
    const r = await runBounded({ argv: ['warren-no-such-program'] });
    expect(r.spawnError?.code).toBe('ENOENT');
    expect(r.exitCode).toBeNull();
    const noDir = await runBounded({ argv: ['true'], cwd: path.join(tmpDir(), 'missing') });
    expect(noDir.spawnError?.code).toBe('ENOENT'); // A NUL cannot reach a program's argv: refused as child_process refuses it, never cut short.
    expect(() => startBounded({ argv: ['echo', 'a\0b'] })).toThrow(/null bytes/);
  });

  it('reports a death by signal by its name, and leaves no zombie and no listener behind', async () => {
    let pid = 0;
    const r = await runBounded({ argv: ['sh', '-c', 'kill -TERM $$'], onSpawn: (p) => (pid = p) });
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: false });
    // A number with two names gets the one child_process gives it.
    expect((await runBounded({ argv: ['sh', '-c', 'kill -ABRT $$'] })).signal).toBe('SIGABRT');
    expect(fs.existsSync(`/proc/${pid}`)).toBe(false); // reaped
    expect(process.listenerCount('SIGCHLD')).toBe(0);
  });

  it('passes large output through whole, on both pipes at once', async () => {
    const r = await runBounded({
      argv: ['sh', '-c', 'head -c 3000000 /dev/zero | tr "\\0" a; head -c 2000000 /dev/zero | tr "\\0" b >&2'],
      stdout: 'collect',
      stderr: 'collect',
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(3_000_000);
    expect(r.stderr.length).toBe(2_000_000);
    expect(r.stdout.every((c) => c === 0x61)).toBe(true);
  });

  it('on timeout ends the whole process group, a grandchild included', async () => {
    const pidFile = path.join(tmpDir(), 'pid');
    // 1 s: time for the shell to start and write the pid, also on a loaded machine.
    const r = await runBounded({ argv: ['sh', '-c', `sleep 30 & echo $! > ${pidFile}; wait`], timeoutMs: 1000 });
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(await gone(readPid(pidFile))).toBe(true);
  });

  it('gives a grace period: SIGTERM first, SIGKILL only for what ignores it', async () => {
    const dir = tmpDir();
    const polite = await runBounded({ argv: ['sh', '-c', 'sleep 30'], timeoutMs: 200, graceMs: 5000 });
    expect(polite).toMatchObject({ timedOut: true, signal: 'SIGTERM', forced: false });
    const ready = path.join(dir, 'ready');
    const stubborn = await runBounded({
      argv: ['sh', '-c', `trap '' TERM; echo $$ > ${ready}; while :; do sleep 0.05; done`],
      // 1 s: the trap is set before the timeout, also on a loaded machine.
      timeoutMs: 1000,
      graceMs: 300,
    });
    expect(stubborn).toMatchObject({ timedOut: true, forced: true, signal: 'SIGKILL' });
  });

  it('an abort ends it like a timeout, recorded as aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const r = await runBounded({ argv: ['sleep', '30'], signal: controller.signal });
    expect(r).toMatchObject({ aborted: true, timedOut: false });
  });

  it('does not wait for a process that escaped with the pipes open, when told how long to drain', async () => {
    const pidFile = path.join(tmpDir(), 'pid');
    const started = Date.now();
    // setsid leaves the group; the grandchild keeps stdout open.
    const r = await runBounded({
      argv: ['sh', '-c', `setsid sleep 30 & echo $! > ${pidFile}; echo out`],
      stdout: 'collect',
      drainMs: 200,
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toBe('out\n');
    await waitFor(pidFile);
    process.kill(readPid(pidFile), 'SIGKILL');
  });

  it('a second stop skips the grace', async () => {
    const proc = startBounded({ argv: ['sh', '-c', "trap '' TERM; while :; do sleep 0.05; done"], graceMs: 30_000 });
    await new Promise((r) => setTimeout(r, 100));
    proc.stop();
    proc.stop();
    const r = await proc.done;
    expect(r.forced).toBe(true);
    expect(r.durationMs).toBeLessThan(10_000);
  });
});
