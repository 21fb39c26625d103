import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildId, commandOf, encodeFrame, FrameReader, json, WARM_COMMANDS, warmSocket, type WarmRequest, type WarmStatus } from '../src/cli/warm-protocol.js';
import { endMark, MarkedStream } from '../src/cli/warm-relay.js';
import { alive, pidsWithEnv, startCli, waitForFile, waitUntilGone } from './helpers/procs.js';
import { BIN, makeRepo, runCli, tmpDir, type TestRepo } from './helpers/repo.js';
import { unavailable } from './helpers/capabilities.js';

/**
 * `warren warm` against the real command line: commands handed to its waiting processes answer
 * as the command line answers, with the client's environment, folder and umask; signals and a
 * vanished client reach the command; every way of not taking a command leaves the command line
 * to run it; nothing is left running; a sandboxed run cannot reach it.
 */

const LOCAL = { WARREN_WARM: 'off' };

interface Warm {
  pid: number;
  /** What `warren warm` said on stderr so far. */
  log(): string;
  /** Resolves when the line matching `pattern` is in the log. */
  said(pattern: RegExp): Promise<void>;
  workers(): number[];
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

async function startWarm(repo: TestRepo, args: string[] = [], execPath = process.execPath): Promise<Warm> {
  const child = spawn(execPath, [BIN, 'warm', ...args], { cwd: repo.root, env: { ...process.env, WARREN_HOME: repo.home }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (text += d));
  const done = new Promise<{ code: number | null }>((resolve) => child.on('close', (code) => resolve({ code })));
  const pid = child.pid ?? 0;
  let stopped = false;
  onTestFinished(async () => {
    const left = childrenOf(pid);
    if (!stopped) child.kill('SIGKILL');
    await waitUntilGone(left);
  });
  const size = Number(args[args.indexOf('--processes') + 1] || 2);
  const socket = warmSocket(repo.home);
  // Listening, and every one of its processes loaded and idle (asked over the socket).
  await waitUntil(async () => fs.existsSync(socket) && (await idle(socket)) === size, () => `warren warm did not get ready:\n${stdout}${text}`);
  return {
    pid,
    log: () => text,
    said: (pattern) => waitUntil(async () => pattern.test(text), () => `warren warm never said ${pattern}:\n${text}`),
    workers: () => childrenOf(pid),
    async stop(signal = 'SIGTERM') {
      stopped = true;
      child.kill(signal);
      const ended = await done;
      return { code: ended.code, stdout, stderr: text };
    },
  };
}

/** How many warm processes are idle, asked as `bench core` asks (a P frame, answered by K); -1 when nothing answers. */
function idle(socket: string): Promise<number> {
  return new Promise((resolve) => {
    const conn = net.connect(socket);
    const reader = new FrameReader();
    conn.on('connect', () => conn.write(encodeFrame('P', '')));
    conn.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) if (frame.kind === 'K') resolve(json<WarmStatus>(frame.body).idle);
    });
    conn.on('error', () => resolve(-1));
    conn.on('close', () => resolve(-1));
  });
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && alive(Number(name))) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

describe('warren warm: its protocol', () => {
  it('names the command past the global options; help, version and mistakes are left to the command line', () => {
    expect(commandOf(['new', 'feat', 'a'])).toBe('new');
    expect(commandOf(['--json', '--repo', '/r', 'list'])).toBe('list');
    expect(commandOf(['--repo=/r', 'show', 'x'])).toBe('show');
    expect(commandOf(['--help', 'new'])).toBeNull();
    expect(commandOf(['-V'])).toBeNull();
    expect(commandOf(['--repo'])).toBeNull();
    expect(commandOf([])).toBeNull();
    // What reads stdin, runs in the foreground or stays up is never handed over.
    for (const name of ['exec', 'run', 'trust', 'hooks', 'hook', 'mcp', 'serve', 'warm', 'land', 'queue', 'setup', 'verify']) expect(WARM_COMMANDS.has(name)).toBe(false);
  });

  it('frames survive any split of the byte stream', () => {
    const bytes = Buffer.concat([encodeFrame('R', { a: 1 }), encodeFrame('O', Buffer.from('out\n')), encodeFrame('X', { code: 0, signal: null })]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const reader = new FrameReader();
      const frames = [...reader.push(bytes.subarray(0, cut)), ...reader.push(bytes.subarray(cut))];
      expect(frames.map((f) => `${f.kind}:${f.body.toString()}`)).toEqual(['R:{"a":1}', 'O:out\n', 'X:{"code":0,"signal":null}']);
    }
  });

  it('output passes on until the end mark, wherever the chunks split it; only a possible start of the mark waits', () => {
    const mark = endMark('0123abcd');
    const stream = `line one\nline two \u0000 with a NUL\n${mark}late`;
    for (let cut = 0; cut <= stream.length; cut++) {
      const passed: string[] = [];
      const relay = new MarkedStream(Buffer.from(mark), (b) => passed.push(b.toString()));
      const ended = [relay.push(Buffer.from(stream.slice(0, cut))), relay.push(Buffer.from(stream.slice(cut)))];
      expect(passed.join('')).toBe('line one\nline two \u0000 with a NUL\n');
      expect(ended[1]).toBe(true);
    }
    // Held back only while it may be the mark: a NUL at a chunk's end, then passed with what follows.
    const passed: string[] = [];
    const relay = new MarkedStream(Buffer.from(mark), (b) => passed.push(b.toString()));
    relay.push(Buffer.from('progress 50%\n'));
    expect(passed).toEqual(['progress 50%\n']);
    relay.push(Buffer.from('x\u0000'));
    expect(passed.join('')).toBe('progress 50%\nx');
    relay.push(Buffer.from('y'));
    expect(passed.join('')).toBe('progress 50%\nx\u0000y');
    // A process that died without its mark: what was held is output after all.
    relay.push(Buffer.from('\u0000warren'));
    relay.flush();
    expect(passed.join('')).toBe('progress 50%\nx\u0000y\u0000warren');
  });
});

describe('warren warm', () => {
  it('runs the commands it may in its waiting processes, answering exactly as the command line does', async () => {
    const repo = makeRepo();
    const warm = await startWarm(repo);
    const made = await repo.warren('new', 'feat', 'a');
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^ready: feat\/a at /);
    for (const args of [
      ['--json', 'list'],
      ['show', 'a'],
      ['--json', 'show', 'a'],
      ['path', 'a'],
      ['new', 'feat', 'a'], // refused: exists
      ['new', 'nope', 'b'], // bad input: exit 2
      ['--json', 'rm', 'missing'],
    ]) {
      const viaWarm = await repo.warren(...args);
      const local = await runCli(args, { cwd: repo.root, home: repo.home, env: LOCAL });
      expect({ args, code: viaWarm.code, stdout: viaWarm.stdout, stderr: viaWarm.stderr }).toEqual({ args, code: local.code, stdout: local.stdout, stderr: local.stderr });
    }
    // Each ran in a process of its own, once; the local runs did not go there.
    const ran = [...warm.log().matchAll(/ran `warren ([^`]*)`.*\(pid (\d+)\)/g)];
    expect(ran.map((m) => m[1])).toEqual(['new feat a', '--json list', 'show a', '--json show a', 'path a', 'new feat a', 'new nope b', '--json rm missing']);
    expect(new Set(ran.map((m) => m[2])).size).toBe(ran.length);
    expect(warm.log()).toMatch(/ran `warren new feat a` in .*: exit 1 after/);
    expect(warm.log()).toMatch(/ran `warren new nope b` in .*: exit 2 after/);
    // Not a command it may run: the command line runs it, and warren warm hears nothing of it.
    expect((await repo.warren('exec', 'a', '--', 'true')).code).toBe(0);
    expect(warm.log()).not.toContain('exec a');
  });

  it('keeps the state database open: a command closes it without checkpointing its log; warm checkpoints it when it stops', async () => {
    const repo = makeRepo();
    const wal = path.join(repo.home, 'state.db-wal');
    // The command line alone: its close is the database's last, which checkpoints and removes the log.
    expect((await runCli(['new', 'feat', 'a'], { cwd: repo.root, home: repo.home, env: LOCAL })).code).toBe(0);
    expect(fs.existsSync(wal)).toBe(false);
    const warm = await startWarm(repo);
    expect((await repo.warren('new', 'feat', 'b')).code).toBe(0);
    expect(warm.log()).toMatch(/ran `warren new feat b`/);
    // Not the last close while warm holds the database: the log stays, its commits in it.
    expect(fs.statSync(wal).size).toBeGreaterThan(0);
    expect((await warm.stop()).code).toBe(0);
    expect(fs.existsSync(wal)).toBe(false);
    const listed = JSON.parse((await runCli(['--json', 'list'], { cwd: repo.root, home: repo.home, env: LOCAL })).stdout) as { id: string }[];
    expect(listed.map((t) => t.id).sort()).toEqual(['a', 'b']);
  });

  it("takes the client's environment, folder and umask: the command and what it starts see them", async () => {
    const marks = tmpDir('warren-warm-marks-');
    const repo = makeRepo({ files: { 'README.md': '# t\n', 'src/x.txt': 'x\n', 'warren.yaml': 'setup:\n  - { id: env, run: "echo $WARM_PROBE > $WARM_MARKS/probe" }\n' } });
    const warm = await startWarm(repo);
    const root = path.join(marks, 'roots');
    // From a subfolder, with a worktree root only this client's environment names, under umask 077.
    const out = execFileSync('sh', ['-c', `umask 077; exec "${process.execPath}" "${path.resolve(import.meta.dirname, '../bin/warren.js')}" --json new feat e`], {
      cwd: path.join(repo.root, 'src'),
      env: { ...process.env, WARREN_HOME: repo.home, WARREN_WORKTREE_ROOT: root, WARM_PROBE: 'from-the-client', WARM_MARKS: marks },
      encoding: 'utf8',
    });
    const task = JSON.parse(out) as { path: string };
    expect(task.path.startsWith(root)).toBe(true);
    expect(fs.readFileSync(path.join(marks, 'probe'), 'utf8')).toBe('from-the-client\n');
    expect(fs.statSync(path.join(task.path, 'README.md')).mode & 0o777).toBe(0o600);

    // From another repository than the one warren warm was started in: the command is that one's.
    const other = makeRepo({ name: 'other' });
    const there = await runCli(['new', 'feat', 'elsewhere'], { cwd: other.root, home: repo.home });
    expect(there.code, there.stderr).toBe(0);
    expect(other.git('branch', '--list', 'feat/elsewhere')).not.toBe('');
    expect(repo.git('branch', '--list', 'feat/elsewhere')).toBe('');
    expect(warm.log()).toMatch(/ran `warren new feat elsewhere` in .*other/);
  });

  it('a signal to the client reaches the command (exit as the command line would); a client that vanishes hangs it up; nothing survives', async () => {
    const marks = tmpDir('warren-warm-marks-');
    const repo = makeRepo({ files: { 'README.md': '# t\n', 'warren.yaml': 'setup:\n  - { id: slow, run: "touch $WARM_MARKS/$WARM_ID.started; exec sleep 60" }\n' } });
    const warm = await startWarm(repo);
    const outcomes: Record<string, { code: number | null; output: string; left: number[] }> = {};
    for (const [id, env] of [
      ['viawarm', {}],
      ['local', LOCAL],
    ] as const) {
      const run = startCli(['new', 'feat', id], { cwd: repo.root, home: repo.home, env: { ...env, WARM_MARKS: marks, WARM_ID: id } });
      await waitForFile(path.join(marks, `${id}.started`), 30_000, run);
      expect(pidsWithEnv('WARM_ID', id).length).toBeGreaterThan(0);
      run.child.kill('SIGINT');
      const ended = await run.done;
      // The setup command (in a PID namespace of its own: found by its environment) is gone too.
      outcomes[id] = { code: ended.code, output: normalize(ended.stderr + ended.stdout, id), left: await goneWithin(() => pidsWithEnv('WARM_ID', id)) };
    }
    expect(outcomes.viawarm).toEqual(outcomes.local);
    expect(outcomes.viawarm?.left).toEqual([]);
    expect(outcomes.viawarm?.code).toBe(1);
    expect(outcomes.viawarm?.output).toContain('canceled by SIGINT to warren');
    expect(warm.log()).toMatch(/ran `warren new feat viawarm`/);

    // The client killed outright: the command gets a hangup, and ends with what it started.
    const run = startCli(['new', 'feat', 'gone'], { cwd: repo.root, home: repo.home, env: { WARM_MARKS: marks, WARM_ID: 'gone' } });
    await waitForFile(path.join(marks, 'gone.started'), 30_000, run);
    run.child.kill('SIGKILL');
    expect(await goneWithin(() => pidsWithEnv('WARM_ID', 'gone'), 10_000)).toEqual([]);
    // As when a terminal closes under the command line: the setup ends canceled by SIGHUP, the task is kept, said.
    await warm.said(/ran `warren new feat gone` in .*: exit 1 after/);
    const gone = await repo.warrenJson<{ state: string }>('show', 'gone');
    expect(gone.json.state).toBe('setup_failed');
  });

  it('every way of not taking a command leaves it to the command line, said; a second warm is refused; stopping leaves nothing', async () => {
    const repo = makeRepo({ files: { 'README.md': '# t\n', 'warren.yaml': 'setup:\n  - { id: slow, run: "sleep 2" }\n' } });
    const warm = await startWarm(repo, ['--processes', '1']);
    const workers = warm.workers();
    expect(workers).toHaveLength(1);

    // Another warren warm for the same WARREN_HOME: refused, nothing changed.
    const second = await repo.warren('warm');
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('another warren warm already serves');
    expect(second.stderr).toContain('nothing was started');

    // Busy: its only process runs a slow `new`; a command meanwhile runs in its own process.
    const slow = startCli(['new', 'feat', 'slow'], { cwd: repo.root, home: repo.home });
    await waitUntil(async () => (await idle(warmSocket(repo.home))) === 0);
    const meanwhile = await repo.warren('--json', 'list');
    expect(meanwhile.code).toBe(0);
    expect(meanwhile.stderr).toBe('');
    await warm.said(/all 1 warm process\(es\) busy: `warren --json list` ran in its own process/);
    expect((await slow.done).code).toBe(0);

    // WARREN_WARM=off: never asked.
    expect((await runCli(['path', 'slow'], { cwd: repo.root, home: repo.home, env: LOCAL })).code).toBe(0);
    expect(warm.log()).not.toContain('path slow');

    // Stopped while a command runs: the command finishes, then warren warm exits; no socket, no process left.
    await waitUntil(async () => (await idle(warmSocket(repo.home))) === 1);
    const last = startCli(['new', 'feat', 'last'], { cwd: repo.root, home: repo.home });
    await waitUntil(async () => (await idle(warmSocket(repo.home))) === 0);
    const all = [...warm.workers()];
    const stopped = await warm.stop('SIGINT');
    expect(stopped.code).toBe(0);
    expect((await last.done).code).toBe(0);
    expect(fs.existsSync(warmSocket(repo.home))).toBe(false);
    // Gone already when warren warm has exited: it waits for every process it started.
    expect([...workers, ...all].filter(alive)).toEqual([]);
  });

  it('a client that leaves between accepted and go: the command never starts; the process it had (holding that environment) is replaced', async () => {
    const repo = makeRepo();
    const warm = await startWarm(repo);
    const socket = warmSocket(repo.home);
    const before = warm.workers();
    const request: WarmRequest = {
      build: buildId(path.resolve(import.meta.dirname, '../dist/bundle')),
      argv: ['new', 'feat', 'never'],
      entry: BIN,
      cwd: repo.root,
      env: { ...(process.env as Record<string, string>), WARREN_HOME: repo.home },
      umask: 0o022,
    };
    const heard = await new Promise<string>((resolve) => {
      const conn = net.connect(socket);
      const reader = new FrameReader();
      conn.on('connect', () => conn.write(encodeFrame('R', request)));
      conn.on('data', (chunk: Buffer) => {
        const kinds = reader.push(chunk).map((f) => f.kind);
        if (kinds.length > 0) {
          conn.destroy(); // no G
          resolve(kinds.join(''));
        }
      });
    });
    expect(heard).toBe('A');
    await waitUntil(async () => (await idle(socket)) === 2);
    expect(repo.git('branch', '--list', 'feat/never')).toBe('');
    const after = warm.workers();
    expect(before.filter((pid) => !after.includes(pid))).toHaveLength(1);
    expect(warm.log()).not.toContain('ran `warren');
    // And the next command runs warm.
    expect((await repo.warren('new', 'feat', 'next')).code).toBe(0);
    await warm.said(/ran `warren new feat next`/);
    // Its replacement starts once that process has exited (after the client heard the end): wait for it.
    await waitUntil(async () => (await idle(socket)) === 2);
    expect(warm.workers()).toHaveLength(2);
  });

  it('a warm that was killed: its waiting processes exit, the command line says the socket did not answer and runs the command; the next warm clears it', async () => {
    const repo = makeRepo();
    const warm = await startWarm(repo);
    const workers = warm.workers();
    await warm.stop('SIGKILL');
    expect(await waitUntilGone(workers)).toEqual([]);
    expect(fs.existsSync(warmSocket(repo.home))).toBe(true);

    const made = await repo.warren('new', 'feat', 'after');
    expect(made.code).toBe(0);
    expect(made.stderr).toContain('did not answer');
    expect(made.stderr).toContain('This command ran in its own process');
    expect((await repo.warrenJson<unknown[]>('list')).json).toHaveLength(1);

    const again = await startWarm(repo);
    await again.said(/removed .*cli\.sock, left by a warren warm that is no longer running/);
  });

  it('another build of warren (here: another node) is not asked to run a command: the command line runs it and says why', async () => {
    const repo = makeRepo();
    const otherNode = path.join(tmpDir('warren-warm-node-'), 'node');
    fs.copyFileSync(process.execPath, otherNode);
    fs.chmodSync(otherNode, 0o755);
    const warm = await startWarm(repo, [], otherNode);
    const made = await repo.warren('new', 'feat', 'b');
    expect(made.code).toBe(0);
    expect(made.stderr).toContain('warren warm runs another build of warren');
    expect(made.stderr).toContain('Restart `warren warm`');
    await warm.said(/refused a command from another build of warren/);
    expect(warm.log()).not.toContain('ran `warren new');
  });

  it('a WARREN_HOME whose socket path would pass the 107 bytes of a unix socket: refused, nothing started', async () => {
    const repo = makeRepo();
    const home = path.join(tmpDir('warren-warm-long-'), 'h'.repeat(100));
    const refused = await runCli(['--json', 'warm'], { cwd: repo.root, home });
    expect(refused.code).toBe(1);
    expect((JSON.parse(refused.stdout) as { error: { code: string } }).error.code).toBe('WARM_UNAVAILABLE');
    expect(refused.stdout).toContain('nothing was started');
    expect(fs.existsSync(path.join(home, 'warm'))).toBe(false);
  });

  it.skipIf(unavailable(import.meta.filename, 'bwrap') !== null)('a sandboxed command cannot reach warren warm: its folder is empty inside', async () => {
    const repo = makeRepo({ files: { 'README.md': '# t\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    expect((await repo.warren('new', 'feat', 'box')).code).toBe(0);
    await startWarm(repo);
    const socket = warmSocket(repo.home);
    expect(fs.existsSync(socket)).toBe(true);
    const inside = await repo.warren('exec', 'box', '--', 'sh', '-c', `ls -A "${path.dirname(socket)}"; test -S "${socket}" && echo reachable || echo hidden`);
    expect(inside.stdout).toContain('hidden');
    expect(inside.stdout).not.toContain('cli.sock');
  });
});

async function waitUntil(check: () => Promise<boolean>, why: () => string = () => 'condition not met in time', timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(why());
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls `pids` until it is empty; what is left after `timeoutMs`. */
async function goneWithin(pids: () => number[], timeoutMs = 5000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids();
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Output with what differs between two runs of one command (task ID, ports, times, log names) made alike. */
function normalize(text: string, id: string): string {
  return text.replaceAll(id, 'ID').replace(/[0-9a-f]*\d[0-9a-f]*/g, 'N');
}
