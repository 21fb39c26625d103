import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SANDBOX_UID } from '../../src/system/sandbox-uid.js';
import { unavailable } from '../helpers/capabilities.js';
import { alive, pidsWithEnv, startCli, waitForFile } from '../helpers/procs.js';
import { gitIn, makeRepo, runWarren, tmpDir, type TestRepo } from '../helpers/repo.js';
import { makeNodeModules, treeDigest, unmountUnder } from '../helpers/tree.js';

/**
 * As root, the sandbox's root is not root outside (src/system/sandbox-uid.ts): what only root may
 * open — a 0600 file, a socket of mode 0600, a socket in a 0700 folder — is closed to it, the
 * host sees its processes as SANDBOX_UID, and what it writes is still root's on disk, so root's
 * own git and warren go on as before. Real bwrap, real idmapped mounts, as root.
 */

const noBwrap = unavailable(import.meta.filename, 'bwrap');
const noOverlay = unavailable(import.meta.filename, 'overlay-root');
const notRoot = process.getuid?.() === 0 ? null : 'not root: the sandbox maps root only when warren is root';

/** A folder outside every mask (not /tmp: the sandbox has one of its own), 0755 so that only each entry's own mode counts. */
function outsideEveryMask(): string {
  const dir = fs.mkdtempSync('/var/tmp/warren-uid-');
  fs.chmodSync(dir, 0o755);
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A root-owned unix socket listening at `file` with `mode`; closed when the test ends. */
async function listen(file: string, mode: number): Promise<void> {
  const server = net.createServer((s) => s.end('hello\n'));
  await new Promise<void>((resolve) => server.listen(file, resolve));
  fs.chmodSync(file, mode);
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

/** A node script for the agent: tries each socket, writes {socket: 'connected' | error code} to argv[2]. */
const CONNECT = `const net = require('net'), fs = require('fs');
const [out, ...socks] = process.argv.slice(2); const seen = {};
for (const s of socks) net.connect(s).on('connect', function () { seen[s] = 'connected'; this.destroy(); done(); }).on('error', (e) => { seen[s] = e.code; done(); });
function done() { if (Object.keys(seen).length === socks.length) fs.writeFileSync(out, JSON.stringify(seen)); }
`;

function statusLine(pid: number, name: string): string {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return (line ?? '').slice(name.length + 1).trim();
}

describe.skipIf(noBwrap !== null || notRoot !== null)("as root, the sandbox's root is not root outside", () => {
  it("a 0600 root file and root-only sockets stay closed to it, though they are outside every mask; the host sees its processes as the sandbox's uid", async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    const ws = made.json.path;
    const outside = outsideEveryMask();
    const secret = path.join(outside, 'secret');
    fs.writeFileSync(secret, 'SECRET-root-only\n', { mode: 0o600 });
    const modeSocket = path.join(outside, 'mode-0600.sock');
    await listen(modeSocket, 0o600);
    fs.mkdirSync(path.join(outside, 'private'), { mode: 0o700 });
    const folderSocket = path.join(outside, 'private', 'in-0700-folder.sock');
    await listen(folderSocket, 0o666);
    fs.writeFileSync(path.join(ws, '.connect.cjs'), CONNECT);

    const tried = await repo.warren(
      'exec',
      'agent',
      '--',
      'sh',
      '-c',
      `cat ${secret} > .read 2>&1; ${process.execPath} .connect.cjs .connected ${modeSocket} ${folderSocket}`,
    );
    expect(tried.code, tried.stderr).toBe(0);
    const read = fs.readFileSync(path.join(ws, '.read'), 'utf8');
    expect(read).not.toContain('SECRET');
    expect(read).toMatch(/Permission denied/);
    expect(JSON.parse(fs.readFileSync(path.join(ws, '.connected'), 'utf8'))).toEqual({
      [modeSocket]: 'EACCES',
      [folderSocket]: 'EACCES',
    });

    // The command's uid and gid as the host sees them, read from /proc while it runs.
    const token = `uid-${process.pid}-${Date.now()}`;
    const ready = path.join(ws, '.ready');
    const run = startCli(
      ['exec', 'agent', '--', 'sh', '-c', `touch ${ready}; exec env WARREN_UID_PROBE=${token} sleep 300`],
      {
        cwd: repo.root,
        home: repo.home,
      },
    );
    onTestFinished(async () => {
      run.child.kill('SIGTERM');
      await run.done;
    });
    await waitForFile(ready, 60_000, run);
    await expect.poll(() => pidsWithEnv('WARREN_UID_PROBE', token).length, { timeout: 30_000 }).toBe(1);
    const [pid] = pidsWithEnv('WARREN_UID_PROBE', token) as [number];
    expect(statusLine(pid, 'Uid').split(/\s+/)).toEqual(Array(4).fill(String(SANDBOX_UID)));
    expect(statusLine(pid, 'Gid').split(/\s+/)).toEqual(Array(4).fill(String(SANDBOX_UID)));
    expect(statusLine(pid, 'Groups')).toBe(''); // no supplementary group: none of root's
    run.child.kill('SIGTERM');
    await run.done;
    expect(alive(pid)).toBe(false);
  });

  it("what it writes is root's on disk — the workspace, its git index, its TMPDIR, an agent's state folder — and root's own git status works there after", async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    const ws = made.json.path;
    const wrote = await repo.warren(
      'exec',
      'agent',
      '--',
      'sh',
      '-c',
      'echo made > made.txt && mkdir sub && echo f > sub/f && echo t > "$TMPDIR/agent-tmp" && echo "$TMPDIR" > .tmpdir && git rm -q --cached README.md',
    );
    expect(wrote.code, wrote.stderr).toBe(0);
    const tmp = fs.readFileSync(path.join(ws, '.tmpdir'), 'utf8').trim();
    const gitDir = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(path.join(ws, '.git'), 'utf8'))?.[1]?.trim() ?? '';
    for (const p of ['made.txt', 'sub', 'sub/f']
      .map((r) => path.join(ws, r))
      .concat([path.join(tmp, 'agent-tmp'), path.join(gitDir, 'index')])) {
      const st = fs.statSync(p);
      expect({ p, uid: st.uid, gid: st.gid }).toEqual({ p, uid: 0, gid: 0 });
    }
    // Root's git, as the user would run it in the workspace: no "dubious ownership", the agent's changes seen.
    expect(gitIn(ws, 'status', '--porcelain')).toBe('D  README.md\n?? .tmpdir\n?? README.md\n?? made.txt\n?? sub/');

    // An agent's state folder: the user's settings seeded in (0600, root's), read and added to by the agent.
    const home = tmpDir('warren-home-of-');
    fs.mkdirSync(path.join(home, '.claude'));
    fs.writeFileSync(path.join(home, '.claude/settings.json'), '{"from":"the user"}\n', { mode: 0o600 });
    const bin = path.join(ws, '.fake-bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(
      path.join(bin, 'claude'),
      '#!/bin/sh\ncat "$CLAUDE_CONFIG_DIR/settings.json" > "$CLAUDE_CONFIG_DIR/seen" && mkdir -p "$CLAUDE_CONFIG_DIR/projects" && echo s > "$CLAUDE_CONFIG_DIR/projects/session"\n',
      { mode: 0o755 },
    );
    const ran = await runWarren(['--json', 'run', 'agent', '--agent', 'claude', '--prompt', 'hi'], {
      cwd: repo.root,
      home: repo.home,
      env: { HOME: home, PATH: `${bin}:${process.env.PATH ?? ''}` },
    });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const state = path.join(path.dirname(tmp), 'agents', 'claude');
    expect(fs.readFileSync(path.join(state, 'seen'), 'utf8')).toBe('{"from":"the user"}\n');
    for (const p of ['seen', 'projects', 'projects/session'].map((r) => path.join(state, r))) {
      expect({ p, uid: fs.statSync(p).uid }).toEqual({ p, uid: 0 });
    }
  });

  it('where the step cannot run (no perl on PATH), a sandboxed command is refused, saying why, and nothing runs', async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'sandbox: bwrap\n' } });
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
    expect(made.code, made.stderr).toBe(0);
    // Every command of /usr/bin and /bin but perl.
    const bin = tmpDir('warren-no-perl-');
    for (const dir of ['/usr/bin', '/bin']) {
      for (const name of fs.readdirSync(dir)) {
        if (!name.startsWith('perl') && !fs.existsSync(path.join(bin, name)))
          fs.symlinkSync(path.join(dir, name), path.join(bin, name));
      }
    }
    const marker = path.join(made.json.path, 'ran');
    const r = await runWarren(['--json', 'exec', 'agent', '--', 'touch', marker], {
      cwd: repo.root,
      home: repo.home,
      env: { PATH: bin },
    });
    expect(r.code).toBe(1);
    const error = (JSON.parse(r.stdout) as { error: { code: string; message: string; hint: string } }).error;
    expect(error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(error.message).toMatch(/as root the sandbox's root must be another uid outside.*perl/);
    expect(error.hint).toContain(String(SANDBOX_UID));
    expect(fs.existsSync(marker)).toBe(false);
  });
});

interface Layer {
  path: string;
  mode: string;
  method: string;
  namespaced?: boolean;
  upper: string;
}
type Shown = {
  data: { provision: Layer[]; checkout?: { mode: string } };
  events: { kind: string; message: string }[];
};

/** A repository with a node_modules provisioned cow, and `yaml` besides. */
function cowRepo(yaml: string, extra: Record<string, string> = {}): TestRepo {
  const repo = makeRepo({
    files: {
      '.gitignore': 'node_modules/\n',
      'package.json': '{"name":"app","dependencies":{"left-pad":"1.3.0","dep":"2.0.0"}}\n',
      'package-lock.json': '{"lockfileVersion":3,"packages":{}}\n',
      'warren.yaml': `${yaml}provision:\n  - { path: node_modules, mode: cow }\n`,
      ...extra,
    },
  });
  makeNodeModules(repo.root);
  // Registered after makeRepo's cleanup, so it runs first: a mounted folder cannot be deleted.
  onTestFinished(() => unmountUnder(path.dirname(repo.root)));
  return repo;
}

function mountedOnHost(p: string): boolean {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === p);
}

/** An npm-install-like change in the layer: a file patched, a package replaced wholesale. */
const NPM_LIKE =
  'echo patched > node_modules/left-pad/index.js && rm -r node_modules/dep && mkdir node_modules/dep && echo \'{"version":"3.0.0"}\' > node_modules/dep/package.json';

describe.skipIf(noBwrap !== null || notRoot !== null || noOverlay !== null)(
  "as root, a sandboxed task's copy-on-write layers",
  () => {
    it("are mounted in each command's own namespace, from idmapped layers: the sandbox writes them, the upper layer is root's", async () => {
      const repo = cowRepo('sandbox: bwrap\n');
      const mainBefore = treeDigest(path.join(repo.root, 'node_modules'));
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
      expect(made.code, made.stderr).toBe(0);
      const shown = (await repo.warrenJson<Shown>('show', 'a', '--events', '50')).json;
      const layer = shown.data.provision[0];
      expect(layer).toMatchObject({ path: 'node_modules', mode: 'cow', namespaced: true });
      expect(shown.events.find((e) => e.kind === 'provision.namespaced')?.message).toMatch(
        /as root: this task's bwrap sandbox runs as uid/,
      );
      const nm = path.join(made.json.path, 'node_modules');
      expect(mountedOnHost(nm)).toBe(false);

      const wrote = await repo.warren('exec', 'a', '--', 'sh', '-c', NPM_LIKE);
      expect(wrote.code, wrote.stderr).toBe(0);
      const upper = layer?.upper ?? '';
      for (const rel of ['left-pad/index.js', 'dep', 'dep/package.json']) {
        const st = fs.statSync(path.join(upper, rel));
        expect({ rel, uid: st.uid, gid: st.gid }).toEqual({ rel, uid: 0, gid: 0 });
      }
      // The next command sees the change; the main checkout's copy is as it was.
      const read = await repo.warrenJson<{ log: string }>('exec', 'a', '--', 'cat', 'node_modules/left-pad/index.js');
      expect(read.code, read.stderr).toBe(0);
      expect(fs.readFileSync(read.json.log, 'utf8')).toContain('patched');
      expect(treeDigest(path.join(repo.root, 'node_modules'))).toBe(mainBefore);
      const status = await repo.warrenJson<{ provisioned: { path: string; changed: { path: string }[] }[] }>(
        'status',
        'a',
      );
      expect(status.json.provisioned[0]?.changed.map((c) => c.path)).toContain('node_modules/left-pad/index.js');
      // Nothing to unmount on the host: rm deletes the layers as it would a user's namespaced ones.
      const removed = await repo.warren('rm', 'a', '--discard');
      expect(removed.code, removed.stderr).toBe(0);
      expect(fs.existsSync(path.dirname(upper))).toBe(false);
    });

    it("a layer mounted for everyone (made before the task's sandbox was bwrap) is refused, naming it; --refresh makes it one the sandbox can write", async () => {
      const repo = cowRepo('');
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
      expect(made.code, made.stderr).toBe(0);
      const nm = path.join(made.json.path, 'node_modules');
      expect(mountedOnHost(nm)).toBe(true);
      repo.write('warren.yaml', 'sandbox: bwrap\nprovision:\n  - { path: node_modules, mode: cow }\n');
      const refused = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        NPM_LIKE,
      );
      expect(refused.code).toBe(1);
      expect(refused.json.error.code).toBe('SANDBOX_UNAVAILABLE');
      expect(refused.json.error.message).toContain(`${nm} is a copy-on-write overlay mounted for every process`);
      expect(refused.json.error.hint).toContain('warren provision a --refresh');
      expect(fs.readFileSync(path.join(nm, 'left-pad/index.js'), 'utf8')).not.toContain('patched');

      const refreshed = await repo.warren('provision', 'a', '--refresh');
      expect(refreshed.code, refreshed.stderr).toBe(0);
      expect(mountedOnHost(nm)).toBe(false);
      const wrote = await repo.warren('exec', 'a', '--', 'sh', '-c', NPM_LIKE);
      expect(wrote.code, wrote.stderr).toBe(0);
    });

    it('checkout: cow gives a sandboxed task a plain checkout, saying why; a task without a sandbox still gets its cow one', async () => {
      const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'checkout: cow\nsandbox: bwrap\n' } });
      onTestFinished(() => unmountUnder(path.dirname(repo.root)));
      const boxed = await repo.warrenJson<{ path: string }>('new', 'feat', 'boxed');
      expect(boxed.code, boxed.stderr).toBe(0);
      const shown = (await repo.warrenJson<Shown>('show', 'boxed', '--events', '50')).json;
      expect(shown.data.checkout).toBeUndefined();
      expect(shown.events.find((e) => e.kind === 'checkout.fallback')?.message).toMatch(
        /checkout: cow fell back to git worktree add because as root, a bwrap task's commands run as uid \d+/,
      );
      const wrote = await repo.warren('exec', 'boxed', '--', 'sh', '-c', 'echo agent > README.md');
      expect(wrote.code, wrote.stderr).toBe(0);
      expect(gitIn(boxed.json.path, 'status', '--porcelain')).toBe('M README.md');

      const open = await repo.warrenJson<{ path: string }>('new', 'feat', 'open', '--sandbox', 'none');
      expect(open.code, open.stderr).toBe(0);
      expect((await repo.warrenJson<Shown>('show', 'open')).json.data.checkout).toMatchObject({ mode: 'cow' });
    });
  },
);
