import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, runCli, type TestRepo } from '../helpers/repo.js';
import { startSshHost, waitFor, type SshHost } from '../helpers/ssh-host.js';

/**
 * Faults of a task on another machine (src/run/ssh/): the connection cut mid-`land`, the host's
 * warren killed mid-run, the coordinator killed mid-run, and a task gone here whose workspace
 * stays on its host. Each case: the task made on host `box`, something committed there, the
 * fault, then nothing the agent committed is lost (it reaches the task's branch here), `scan`
 * names what is left, the next ordinary command repairs, `scan` is clean, and the task still
 * lands or is removed. (The connection cut mid-run: test/run/ssh-runner.test.ts.)
 */
const noSshd = unavailable(import.meta.filename, 'sshd');

let host: SshHost;

interface Background {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

/** A warren command of `repo` in the background, its output gathered. */
function background(repo: TestRepo, args: string[], env: Record<string, string> = {}): Background {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: repo.root,
    env: { ...process.env, WARREN_HOME: repo.home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, exited };
}

/** A process stopped by a signal (a WARREN_FAULT `:SIGSTOP` point reached). */
function stopped(pid: number): boolean {
  try {
    return /^State:\s+T/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** The ssh clients of `repo`'s connection still running here (not its master). */
function sshClients(repo: TestRepo): number[] {
  return fs.readdirSync('/proc').flatMap((name) => {
    if (!/^\d+$/.test(name)) return [];
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      return [];
    }
    const ours = argv[0] === 'ssh' && argv.includes('ControlMaster=no') && argv.some((a) => a.includes(repo.home));
    return ours ? [Number(name)] : [];
  });
}

type Strays = { strays: { kind: string; id?: string }[] };

const COMMIT_AND_WAIT = 'echo cut > cut.txt; git add cut.txt; git commit -qm cut; echo committed; exec sleep 300';

describe.skipIf(noSshd !== null)('faults of a task on another machine', () => {
  beforeAll(async () => {
    host = await startSshHost('warrenssh-f');
  }, 120_000);

  afterAll(() => host?.stop());

  const sleeping = () => host.asHost(`pgrep -u ${host.user} -f "[s]leep 300"`).code === 0;

  it(
    'the connection cut mid-land: nothing lands, the branch keeps what it had, the next land fetches and lands',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      expect((await repo.warren('new', 'feat', 'a', '--runner', 'ssh:box')).code).toBe(0);
      // Where it runs, as audit and show (the dashboard's and MCP's view too) say it.
      const shown = await repo.warrenJson<{ runner: Record<string, unknown> }>('show', 'a');
      expect(shown.json.runner).toMatchObject({
        runner: 'ssh:box',
        where: 'host',
        name: 'box',
        address: `${host.user}@127.0.0.1:${host.port}`,
        remotePath: expect.stringContaining(host.userHome),
        pending: false,
      });
      const audit = await repo.warren('audit', 'a');
      expect(audit.stdout).toContain('runner: host box over SSH');
      expect(audit.stdout).toContain('boundary: on host box, through its own warren');
      expect(audit.stdout).toContain("on host box: the host's warren draws the profile");
      const ran = await repo.warren(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        'echo one > one.txt; git add one.txt; git commit -qm one; pwd',
      );
      expect(ran.code, ran.stderr).toBe(0);
      const there = ran.stdout.trim().split('\n').pop() ?? '';
      expect(there).toContain(host.userHome);
      // A commit there that no command of warren's has fetched yet (the agent's, after its run).
      const two = host.asHost(`cd ${there} && echo two > two.txt && git add two.txt && git commit -qm two`);
      expect(two.code, two.out).toBe(0);
      const one = repo.git('rev-parse', 'feat/a');

      // land stops as it is about to fetch; the connection goes (master killed, the host answers no one), land goes on.
      const land = background(repo, ['--json', 'land', 'a'], { WARREN_FAULT: 'ssh:fetching:SIGSTOP' });
      try {
        await waitFor(() => stopped(land.child.pid!));
        expect(stopped(land.child.pid!)).toBe(true);
        const master = host.masterPid(repo);
        expect(master).not.toBeNull();
        await host.down();
        process.kill(master!, 'SIGKILL');
        land.child.kill('SIGCONT');
        const code = await land.exited;
        expect(code, land.out()).toBe(1);
        expect(land.out()).toContain('REMOTE_FAILED');
        expect(land.out()).toContain('nothing was landed');
        // Nothing landed, nothing lost: the branch here as it was, the commit still there.
        expect(repo.git('log', '--format=%s', '-1', 'main')).toBe('initial');
        expect(repo.git('rev-parse', 'feat/a')).toBe(one);
        expect(host.hostTip(repo, 'feat/a')).not.toBe(one);
      } finally {
        land.child.kill('SIGKILL');
        await host.up();
      }
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
      const again = await repo.warren('land', 'a');
      expect(again.code, again.stderr).toBe(0);
      expect(repo.git('show', 'main:two.txt')).toBe('two');
      expect(repo.git('show', 'main:one.txt')).toBe('one');
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
      const rm = await repo.warren('rm', 'a');
      expect(rm.code, rm.stderr).toBe(0);
      expect(host.hostTip(repo, 'feat/a')).toBe('');
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
    },
  );

  it(
    "the host's warren killed mid-run: the run ends there, scan names the task, the next command brings its commit back",
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const made = await repo.warren('new', 'feat', 'b', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const run = background(repo, ['exec', 'b', '--', 'sh', '-c', COMMIT_AND_WAIT]);
      await waitFor(() => run.out().includes('committed'));
      expect(run.out()).toContain('committed');
      // The host's warren that runs it, SIGKILLed as the host's user would.
      const pids = host.asHost(`pgrep -u ${host.user} -f "[r]unner --stdio"`).out.split('\n').filter(Boolean);
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) host.asHost(`kill -KILL ${pid}`);
      const code = await run.exited;
      expect(code, run.out()).not.toBe(0);
      await waitFor(() => !sleeping());
      expect(sleeping()).toBe(false);

      const scan = await repo.warrenJson<Strays>('scan');
      expect(scan.json.strays).toEqual([expect.objectContaining({ kind: 'remote-unfetched', id: 'b' })]);
      const status = await repo.warren('status', 'b');
      expect(status.code, status.stderr).toBe(0);
      expect(repo.git('log', '--format=%s', '-1', 'feat/b')).toBe('cut');
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
      // The host runs the task's next command, and it lands and goes.
      const next = await repo.warren(
        'exec',
        'b',
        '--',
        'sh',
        '-c',
        'echo next > next.txt; git add next.txt; git commit -qm next',
      );
      expect(next.code, next.stderr).toBe(0);
      expect((await repo.warren('land', 'b')).code).toBe(0);
      expect(repo.git('show', 'main:cut.txt')).toBe('cut');
      expect(repo.git('show', 'main:next.txt')).toBe('next');
      const rm = await repo.warren('rm', 'b');
      expect(rm.code, rm.stderr).toBe(0);
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
    },
  );

  it(
    'the coordinator killed mid-run: the run ends there, scan names the task, the next command brings its commit back',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      expect((await repo.warren('new', 'feat', 'c', '--runner', 'ssh:box')).code).toBe(0);
      const run = background(repo, ['exec', 'c', '--', 'sh', '-c', COMMIT_AND_WAIT]);
      await waitFor(() => run.out().includes('committed'));
      expect(run.out()).toContain('committed');
      run.child.kill('SIGKILL');
      await run.exited;
      // Its ssh's input ends with it: the run there ends, and so does that ssh here.
      await waitFor(() => !sleeping());
      expect(sleeping()).toBe(false);
      await waitFor(() => sshClients(repo).length === 0);
      expect(sshClients(repo)).toEqual([]);

      const scan = await repo.warrenJson<Strays>('scan');
      expect(scan.json.strays).toEqual([expect.objectContaining({ kind: 'remote-unfetched', id: 'c' })]);
      expect((await repo.warrenJson<{ runner: { pending: boolean } }>('show', 'c')).json.runner.pending).toBe(true);
      const next = await repo.warren('exec', 'c', '--', 'git', 'log', '--format=%s', '-1');
      expect(next.code, next.stderr).toBe(0);
      expect(next.stdout).toContain('cut');
      expect(repo.git('log', '--format=%s', '-1', 'feat/c')).toBe('cut');
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
      expect((await repo.warren('land', 'c')).code).toBe(0);
      expect(repo.git('show', 'main:cut.txt')).toBe('cut');
      const rm = await repo.warren('rm', 'c');
      expect(rm.code, rm.stderr).toBe(0);
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
    },
  );

  it(
    'gc removes what a task gone here left on its host, and keeps it while it holds a commit that is not here',
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'o', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const ran = await repo.warren(
        'exec',
        'o',
        '--',
        'sh',
        '-c',
        'echo o > o.txt; git add o.txt; git commit -qm o; pwd',
      );
      expect(ran.code, ran.stderr).toBe(0);
      const there = ran.stdout.trim().split('\n').pop() ?? '';
      const fetched = repo.git('rev-parse', 'feat/o');
      // A commit there that was never fetched, then the task's workspace here deleted and pruned by hand: gc forgets its row.
      expect(host.asHost(`cd ${there} && git commit -q --allow-empty -m later`).code).toBe(0);
      fs.rmSync(made.json.path, { recursive: true, force: true });
      repo.git('worktree', 'prune');
      const first = await repo.warrenJson<{ removed: { kind: string }[]; kept: { kind: string; reason: string }[] }>(
        'gc',
      );
      expect(first.code, first.stderr).toBe(0);
      expect(first.json.removed).toEqual([expect.objectContaining({ kind: 'vanished' })]);
      // The host's branch holds a commit that is not here: kept, and why.
      expect(first.json.kept.filter((k) => k.kind === 'remote-orphan')).toEqual([
        expect.objectContaining({ kind: 'remote-orphan', reason: expect.stringContaining('not here') }),
      ]);
      expect(host.hostTip(repo, 'feat/o')).not.toBe('');
      const scan = await repo.warrenJson<Strays>('scan');
      expect(scan.json.strays).toEqual([expect.objectContaining({ kind: 'remote-orphan', id: 'o' })]);

      // Nothing there that is not here (the later commit dropped there): gc removes it there.
      expect(host.asHost(`cd ${there} && git reset -q --hard ${fetched}`).code).toBe(0);
      const second = await repo.warrenJson<{ removed: { kind: string; id?: string }[]; kept: { kind: string }[] }>(
        'gc',
      );
      expect(second.code, second.stderr).toBe(0);
      expect(second.json.removed).toEqual([expect.objectContaining({ kind: 'remote-orphan', id: 'o' })]);
      expect(second.json.kept.filter((k) => k.kind === 'remote-orphan')).toEqual([]);
      expect(host.hostTip(repo, 'feat/o')).toBe('');
      expect(host.asHost(`test -e ${there}`).code).not.toBe(0);
      expect(host.hostTip(repo, 'refs/warren/sent/o')).toBe('');
      expect((await repo.warrenJson<Strays>('scan')).json.strays).toEqual([]);
      // The branch here keeps what was fetched (gc leaves a handed-over task's branch to the user).
      expect(repo.git('rev-parse', 'feat/o')).toBe(fetched);
    },
  );
  it(
    "gc --hosts finds a workspace on its host whose task and record are both gone here (this machine's WARREN_HOME lost), and removes it only when nothing would be lost",
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'u', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const ran = await repo.warren(
        'exec',
        'u',
        '--',
        'sh',
        '-c',
        'echo u > u.txt; git add u.txt; git commit -qm u; pwd',
      );
      expect(ran.code, ran.stderr).toBe(0);
      const there = ran.stdout.trim().split('\n').pop() ?? '';
      // This machine's WARREN_HOME is lost; the user declares the same hosts again.
      const config = fs.readFileSync(path.join(repo.home, 'config.yaml'), 'utf8');
      fs.rmSync(repo.home, { recursive: true, force: true });
      fs.mkdirSync(repo.home, { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(repo.home, 'config.yaml'), config, { mode: 0o600 });
      repo.git('worktree', 'prune');
      type Gc = { removed: { kind: string; id?: string }[]; kept: { kind: string; reason: string }[] };
      // Plain gc knows nothing of it (no record here): it is left alone, and no host is asked.
      const plain = await repo.warrenJson<Gc>('gc');
      expect(plain.code, plain.stderr).toBe(0);
      expect([...plain.json.removed, ...plain.json.kept].filter((x) => x.kind.startsWith('remote'))).toEqual([]);
      expect(host.asHost(`test -d ${there}`).code).toBe(0);
      // Uncommitted work there: kept, and why.
      expect(host.asHost(`echo draft > ${there}/draft.txt`).code).toBe(0);
      const dirty = await repo.warrenJson<Gc>('gc', '--hosts');
      expect(dirty.code, dirty.stderr).toBe(0);
      expect(dirty.json.kept).toEqual([
        expect.objectContaining({ kind: 'remote-unknown', reason: expect.stringContaining('uncommitted changes') }),
      ]);
      expect(host.asHost(`test -d ${there}`).code).toBe(0);
      // Nothing there that is not here (its commit was fetched back before the loss): removed there.
      expect(host.asHost(`rm ${there}/draft.txt`).code).toBe(0);
      const clean = await repo.warrenJson<Gc>('gc', '--hosts');
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.json.removed).toEqual([expect.objectContaining({ kind: 'remote-unknown', id: 'u' })]);
      expect(host.asHost(`test -e ${there}`).code).not.toBe(0);
      expect(host.hostTip(repo, 'feat/u')).toBe('');
      expect(repo.git('show', 'feat/u:u.txt')).toBe('u');
      // Asked again: nothing left there.
      const again = await repo.warrenJson<Gc>('gc', '--hosts');
      expect([...again.json.removed, ...again.json.kept].filter((x) => x.kind.startsWith('remote'))).toEqual([]);
    },
  );
  it(
    "reads at once of a task's workspace on its host (the dashboard's, diff's) take turns: each answers with the same files",
    { timeout: 300_000 },
    async () => {
      const repo = host.hostRepo();
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'r', '--runner', 'ssh:box');
      expect(made.code, made.stderr).toBe(0);
      const edit = 'echo c > c.txt; git add c.txt; git commit -qm c; echo draft > draft.txt; echo more >> README.md';
      expect((await repo.warren('exec', 'r', '--', 'sh', '-c', edit)).code).toBe(0);
      // Six processes at once, each fetching the host's workspace into the task's ref here.
      const reads = await Promise.all(
        Array.from({ length: 6 }, () => runCli(['--json', 'diff', 'r', '--stat'], { cwd: repo.root, home: repo.home })),
      );
      for (const r of reads) {
        expect(r.code, r.stderr).toBe(0);
        const files = (JSON.parse(r.stdout) as { files: { path: string }[] }).files.map((f) => f.path).sort();
        expect(files).toEqual(['README.md', 'c.txt', 'draft.txt']);
      }
      expect(repo.git('for-each-ref', 'refs/warren/remote-worktree', 'refs/warren/quarantine')).toBe('');
      // Its uncommitted work there is not removed by a plain rm: it says so, and how out (not a mount's fix).
      const refused = await repo.warren('rm', 'r');
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('uncommitted changes (`warren checkpoint r` brings them here)');
      expect(refused.stderr).not.toContain('fuser');
      expect((await repo.warren('checkpoint', 'r', '-m', 'draft')).code).toBe(0);
      const rm = await repo.warren('rm', 'r', '--discard');
      expect(rm.code, rm.stderr).toBe(0);
    },
  );
});
