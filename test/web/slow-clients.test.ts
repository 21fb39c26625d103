import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../src/composition.js';
import { BIN, makeRepo } from '../helpers/repo.js';
import { readSse, request, startServe, type SseEvent } from '../helpers/serve.js';

/**
 * Clients that stop reading must not make `warren serve` hold what it would have sent them
 * (issue 12, §5): 50 log followers that never read while a command prints 20 MB once took the
 * server from 165 MB to 2 GB, and other requests took seconds.
 */

const FOLLOWERS = 50;
const OUTPUT_BYTES = 20_000_000;
/** The server's resident memory may grow by at most 2 MiB per stalled follower (the old code grew by gigabytes). */
const RSS_GROWTH_BOUND = FOLLOWERS * 2 * 1024 * 1024;
/** Another request is answered within this long while the followers are stalled. */
const ANSWER_BOUND_MS = 3000;

/** Resident memory of a process, from /proc (bytes). */
function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** A follower that reads the response's first event, then never reads again: its socket stays open, paused. */
function stalledFollower(port: number, pathAndQuery: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${pathAndQuery} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    });
    onTestFinished(() => void socket.destroy());
    let head = '';
    const onData = (d: string): void => {
      head += d;
      if (!head.includes('event: meta')) return;
      socket.off('data', onData);
      socket.pause();
      if (!head.startsWith('HTTP/1.1 200')) reject(new Error(`the log stream was refused:\n${head}`));
      else resolve(socket);
    };
    socket.setEncoding('utf8').on('data', onData);
    socket.on('error', reject);
  });
}

/**
 * A follower that reads the first event, stops reading, and later resumes: `resume()` collects
 * every event up to `end`.
 */
function pausedFollower(url: string): Promise<{ resume(): Promise<SseEvent[]> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      const seen: SseEvent[] = [];
      let onEnd: () => void = () => undefined;
      readSse(res, (e) => {
        seen.push(e);
        if (e.event === 'meta') {
          res.pause();
          resolve({
            resume: () =>
              new Promise((done) => {
                onEnd = () => done(seen);
                res.resume();
              }),
          });
        }
        if (e.event === 'end') onEnd();
      });
    });
    req.on('error', reject);
    onTestFinished(() => void req.destroy());
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = Date.now();
  const value = await fn();
  return { ms: Date.now() - start, value };
}

describe('warren serve with clients that stop reading', () => {
  it(`holds its memory growth under ${RSS_GROWTH_BOUND / 2 ** 20} MiB while ${FOLLOWERS} stalled log followers watch a command print ${OUTPUT_BYTES / 1e6} MB, and keeps answering`, async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'loud')).code).toBe(0);
    const serve = await startServe({ cwd: repo.root, home: repo.home });
    const pid = serve.child.pid ?? 0;
    const token = serve.token;
    const auth = { headers: { 'x-warren-token': token } };
    const project = String(JSON.parse((await request(`${serve.url}api/meta`, auth)).body).project);

    // The command waits for a go file, so every follower is in place before it prints.
    const go = path.join(repo.home, 'go');
    const exec = spawn(
      process.execPath,
      [
        BIN,
        'exec',
        'loud',
        '--timeout',
        '120s',
        '--',
        'sh',
        '-c',
        `while [ ! -e "$1" ]; do sleep 0.05; done; yes x | head -c ${OUTPUT_BYTES}`,
        'sh',
        go,
      ],
      { cwd: repo.root, env: { ...process.env, WARREN_HOME: repo.home }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let execErr = '';
    exec.stderr.setEncoding('utf8').on('data', (d: string) => (execErr += d));
    const execDone = new Promise<number | null>((resolve) => exec.once('exit', resolve));
    onTestFinished(() => void exec.kill('SIGKILL'));
    const store = openStore(repo.home);
    onTestFinished(() => store.close());
    await expect
      .poll(() => store.taskEvents(project, 'loud', 20).some((e) => e.kind === 'run.started'), { timeout: 30_000 })
      .toBe(true);

    const logUrl = `/api/log?project=${encodeURIComponent(project)}&id=loud&token=${token}`;
    const followers: net.Socket[] = [];
    for (let i = 0; i < FOLLOWERS; i++) followers.push(await stalledFollower(serve.port, logUrl));
    const lagging = await pausedFollower(`http://127.0.0.1:${serve.port}${logUrl}`);
    const before = rssOf(pid);

    // Memory is sampled on a timer of its own, so a server too busy to answer is still measured;
    // over the bound, the server is killed at once rather than left to take the machine's memory.
    let peak = before;
    const sampler = setInterval(() => {
      if (serve.child.exitCode !== null || serve.child.signalCode !== null) return;
      peak = Math.max(peak, rssOf(pid));
      if (peak - before > RSS_GROWTH_BOUND) serve.child.kill('SIGKILL');
    }, 50);
    onTestFinished(() => clearInterval(sampler));
    let endedAt: number | null = null;
    void execDone.then(() => (endedAt = Date.now()));
    fs.writeFileSync(go, '');

    // While the command prints and for 5 s after: another request, again and again, each answered in time.
    let slowest = 0;
    const deadline = Date.now() + 90_000;
    while (
      Date.now() < deadline &&
      serve.child.exitCode === null &&
      serve.child.signalCode === null &&
      (endedAt === null || Date.now() - endedAt < 5000)
    ) {
      const answer = await Promise.race([
        timed(() => request(`${serve.url}api/meta`, auth).catch(() => null)),
        new Promise<null>((r) => setTimeout(() => r(null), ANSWER_BOUND_MS)),
      ]);
      slowest = Math.max(slowest, answer?.ms ?? ANSWER_BOUND_MS);
      if (answer?.value?.status !== 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    clearInterval(sampler);
    const growth = peak - before;
    console.log(
      `warren serve RSS: ${(before / 2 ** 20).toFixed(0)} MiB before, peak ${(peak / 2 ** 20).toFixed(0)} MiB (+${(growth / 2 ** 20).toFixed(0)} MiB); slowest /api/meta ${slowest} ms`,
    );
    expect(growth, `the server grew by ${(growth / 2 ** 20).toFixed(0)} MiB`).toBeLessThanOrEqual(RSS_GROWTH_BOUND);
    expect(endedAt, `the command did not finish: ${execErr}`).not.toBeNull();
    expect(await execDone, execErr).toBe(0);
    expect(slowest, 'the slowest answer to /api/meta (ms)').toBeLessThan(ANSWER_BOUND_MS);
    // The stalled followers are still connected, and the server still serves a fresh one.
    expect(followers.every((s) => !s.destroyed)).toBe(true);
    const fleet = await timed(() => request(`${serve.url}api/fleet`, auth));
    expect(fleet.value.status).toBe(200);
    expect(fleet.ms).toBeLessThan(ANSWER_BOUND_MS);

    // A follower that fell behind and reads again is told how much it missed, and every byte is accounted for.
    const events = await lagging.resume();
    const count = (kind: string): number => events.filter((e) => e.event === kind).length;
    const skips = events
      .filter((e) => e.event === 'skip')
      .map((e) => (JSON.parse(e.data) as { skipped: number }).skipped);
    expect(skips.length).toBeGreaterThan(0);
    const started = events.find((e) => e.event === 'start');
    const text = events
      .filter((e) => e.event === 'chunk')
      .map((e) => (JSON.parse(e.data) as { text: string }).text)
      .join('');
    const skipped =
      skips.reduce((a, b) => a + b, 0) + (JSON.parse(started?.data ?? '{}') as { skipped: number }).skipped;
    expect(skipped + Buffer.byteLength(text)).toBe(OUTPUT_BYTES);
    expect(text.endsWith('x\n')).toBe(true);
    expect(count('end')).toBe(1);

    // Stalled clients do not keep the server from stopping: ctrl-c cuts them after its 2 s wait.
    const exited = new Promise((resolve) => serve.child.once('exit', resolve));
    serve.child.kill('SIGINT');
    const stopped = await timed(() => exited);
    expect(stopped.ms).toBeLessThan(10_000);
  });
});
