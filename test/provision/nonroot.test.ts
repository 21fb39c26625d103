import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { waitForFile, waitUntilGone, pidsWithEnv } from '../helpers/procs.js';
import { BIN, gitIn, tmpDir, trustRepo } from '../helpers/repo.js';
import { makeNodeModules, treeDigest } from '../helpers/tree.js';

/**
 * warren run as an unprivileged user (uid 65534, through setpriv): the real
 * fs.protected_hardlinks refusal for the hardlink fill pass, and cow without root — an overlay
 * mounted only inside the user namespace of each command warren runs, never on the host. Needs
 * root to switch users; skipped with the reason otherwise.
 */

const NOBODY = 65534;
const noNobody = unavailable(import.meta.filename, 'nobody');
const noHardlinkRefusal = noNobody ?? unavailable(import.meta.filename, 'protected-hardlinks');
const nsUnavailable = noNobody ?? unavailable(import.meta.filename, 'overlay-userns');
const bwrapUnavailable = nsUnavailable ?? unavailable(import.meta.filename, 'bwrap');

interface Cli {
  code: number;
  stdout: string;
  stderr: string;
}

/** The namespaced rung is what this file tests: fuse-overlayfs (the rung above it) is skipped; test/provision/fuse.test.ts tests it. */
function nobodyArgv(home: string, args: readonly string[], env: Record<string, string>): string[] {
  const vars = Object.entries({ HOME: home, WARREN_HOME: home, WARREN_COW: 'userns', ...env }).map(
    ([k, v]) => `${k}=${v}`,
  );
  return [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'env', ...vars, process.execPath, BIN, ...args];
}

function asNobody(cwd: string, home: string, args: readonly string[], env: Record<string, string> = {}): Cli {
  const r = spawnSync('setpriv', nobodyArgv(home, args, env), { cwd, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The CLI as nobody, without waiting: for checks made while the command runs. */
function startAsNobody(
  cwd: string,
  home: string,
  args: readonly string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<Cli> } {
  const child = spawn('setpriv', nobodyArgv(home, args, env), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return {
    child,
    done: new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))),
  };
}

interface NobodyRepo {
  base: string;
  root: string;
  home: string;
  /** A folder nobody can write, for ready/go marker files. */
  marks: string;
  warren(args: readonly string[], env?: Record<string, string>): Cli;
  json<T>(args: readonly string[], env?: Record<string, string>): T;
}

/** A repository owned by uid 65534 with an npm-shaped ignored node_modules provisioned as cow. */
function nobodyRepo(yaml: string, extra: (root: string) => void = () => undefined): NobodyRepo {
  const base = tmpDir();
  fs.chmodSync(base, 0o755);
  const root = path.join(base, 'app');
  const home = path.join(base, 'home');
  const marks = path.join(base, 'marks');
  for (const d of [root, home, marks]) fs.mkdirSync(d);
  gitIn(root, 'init', '-q', '-b', 'main');
  gitIn(root, 'config', 'user.email', 'test@example.invalid');
  gitIn(root, 'config', 'user.name', 'Warren Test');
  fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\nvendor/\n');
  fs.writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
  fs.writeFileSync(path.join(root, 'warren.yaml'), yaml);
  makeNodeModules(root);
  extra(root);
  gitIn(root, 'add', '-A');
  gitIn(root, 'commit', '-q', '-m', 'init');
  trustRepo(root, home); // before the chown: the state database is uid 65534's too
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, root, home, marks]);
  const warren = (args: readonly string[], env: Record<string, string> = {}): Cli => asNobody(root, home, args, env);
  return {
    base,
    root,
    home,
    marks,
    warren,
    json<T>(args: readonly string[], env: Record<string, string> = {}): T {
      const r = warren(['--json', ...args], env);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return JSON.parse(r.stdout) as T;
    },
  };
}

interface Provisioned {
  path: string;
  mode: string;
  requested: string;
  isolated: boolean;
  method: string;
  namespaced?: boolean;
  fallback?: string;
  upper?: string;
  lower?: string;
  linked?: number;
  filled?: number;
}

function provisionOf(repo: NobodyRepo, id: string): Provisioned[] {
  return repo.json<{ data: { provision: Provisioned[] } }>(['show', id]).data.provision;
}

/** Overlay mounts in the host's mount table (this test runs as root, on the host) that touch `dir`. */
function hostOverlaysTouching(dir: string): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.includes(' - overlay ') && line.includes(dir));
}

const COW_YAML =
  'kill_grace: 300ms\nprovision:\n  - { path: node_modules, mode: cow }\nsetup:\n  - { id: sees-layer, run: "cat node_modules/dep/lib/main.js > node_modules/.setup-saw-it" }\n';

describe.skipIf(noHardlinkRefusal !== null)('provisioning as an unprivileged user', () => {
  it('fills what protected_hardlinks refuses to link; cow is an overlay in a user namespace, and warren says who can see it', () => {
    const repo = nobodyRepo(
      'provision:\n  - { path: node_modules, mode: cow }\n  - { path: vendor, mode: hardlink }\n',
      (root) => {
        fs.mkdirSync(path.join(root, 'vendor'));
        fs.writeFileSync(path.join(root, 'vendor/mine.txt'), 'mine\n');
        fs.writeFileSync(path.join(root, 'vendor/roots.txt'), 'root owns this\n');
      },
    );
    // Owned by root and not writable by nobody: with protected_hardlinks=1, link(2) refuses it.
    execFileSync('chown', ['0:0', path.join(repo.root, 'vendor/roots.txt')]);

    const made = repo.warren(['--json', 'new', 'feat', 'one']);
    expect(made.code, made.stdout + made.stderr).toBe(0);
    const ws = (JSON.parse(made.stdout) as { path: string }).path;
    expect(made.stderr).toContain('vendor: 1 file(s) could not be hard-linked and were copied instead');
    const [nm, vendor] = provisionOf(repo, 'one');
    if (nsUnavailable) {
      // This machine's rung of the ladder: a copy, and why.
      expect(made.stderr).toMatch(/node_modules: cow fell back to cp -a because not root/);
      expect(nm).toMatchObject({ path: 'node_modules', requested: 'cow', mode: 'copy' });
      expect(nm?.fallback).toMatch(/^not root/);
    } else {
      expect(made.stderr).not.toContain('cow fell back');
      expect(made.stderr).toContain(
        'node_modules: a copy-on-write layer in a user namespace (not root), visible only to commands run through warren (exec, run, setup, verify)',
      );
      expect(made.stderr).toContain(
        'tools outside warren (an editor, a shell) see an empty folder. `warren exec one -- $SHELL` opens a shell that sees it.',
      );
      expect(nm).toMatchObject({
        path: 'node_modules',
        requested: 'cow',
        mode: 'cow',
        isolated: true,
        method: 'overlay (user namespace)',
        namespaced: true,
      });
      expect(nm?.fallback).toBeUndefined();
      // Made here: the layers and the empty mount point; mounted nowhere on the host.
      expect(fs.readdirSync(path.join(ws, 'node_modules'))).toEqual([]);
      expect(fs.statSync(nm?.upper ?? '').uid).toBe(NOBODY);
      expect(hostOverlaysTouching(repo.base)).toEqual([]);
    }

    expect(vendor).toMatchObject({ path: 'vendor', mode: 'hardlink', linked: 1, filled: 1 });
    expect(fs.statSync(path.join(ws, 'vendor/mine.txt')).ino).toBe(
      fs.statSync(path.join(repo.root, 'vendor/mine.txt')).ino,
    );
    expect(fs.statSync(path.join(ws, 'vendor/roots.txt')).ino).not.toBe(
      fs.statSync(path.join(repo.root, 'vendor/roots.txt')).ino,
    );
    expect(fs.readFileSync(path.join(ws, 'vendor/roots.txt'), 'utf8')).toBe('root owns this\n');
  });
});

describe.skipIf(noNobody !== null)('removeTree as an unprivileged user', () => {
  it('empties its own mode-000 and read-only folders (overlay leaves work/work mode 000), and never changes what a link points at', () => {
    const base = tmpDir();
    fs.chmodSync(base, 0o755);
    const doomed = path.join(base, 'doomed');
    const outside = path.join(base, 'outside');
    for (const d of ['work/work', 'readonly']) fs.mkdirSync(path.join(doomed, d), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(doomed, 'work/work/#12'), '');
    fs.writeFileSync(path.join(doomed, 'readonly/f'), 'x');
    fs.writeFileSync(path.join(outside, 'keep'), 'keep');
    fs.symlinkSync(outside, path.join(doomed, 'link'));
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, base]);
    fs.chmodSync(path.join(doomed, 'work/work'), 0o000);
    fs.chmodSync(path.join(doomed, 'readonly'), 0o555);
    fs.chmodSync(outside, 0o500);
    const lib = path.resolve(import.meta.dirname, '../../dist/system/remove-tree.js');
    const r = spawnSync(
      'setpriv',
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        process.execPath,
        '--input-type=module',
        '-e',
        `const { removeTree } = await import(${JSON.stringify(lib)}); console.log(JSON.stringify(removeTree(${JSON.stringify(doomed)})));`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(fs.existsSync(doomed)).toBe(false);
    expect(fs.statSync(outside).mode & 0o777).toBe(0o500);
    expect(fs.readFileSync(path.join(outside, 'keep'), 'utf8')).toBe('keep');
  });
});

describe.skipIf(nsUnavailable !== null)('cow in a user namespace (not root)', () => {
  it('exec sees the snapshot and writes only its upper layer; never on the host; status, --refresh and rm', async () => {
    const repo = nobodyRepo(COW_YAML);
    const before = treeDigest(path.join(repo.root, 'node_modules'));
    const one = repo.json<{ path: string }>(['new', 'feat', 'one']).path;
    const two = repo.json<{ path: string }>(['new', 'feat', 'two']).path;
    const [rec] = provisionOf(repo, 'one');
    const upper = rec?.upper ?? '';
    const lower = rec?.lower ?? '';
    const lowerBefore = treeDigest(lower);
    // Setup during `warren new` ran inside the namespace and saw the layer.
    expect(fs.readFileSync(path.join(upper, '.setup-saw-it'), 'utf8')).toBe('exports.x = 1;\n');

    const ready = path.join(repo.marks, 'ready');
    const go = path.join(repo.marks, 'go');
    const script = [
      'cat node_modules/left-pad/index.js',
      'echo patched > node_modules/left-pad/index.js', // a write
      'rm node_modules/.bin/left-pad', // a delete
      'rm -rf node_modules/dep && mkdir node_modules/dep && echo "{}" > node_modules/dep/package.json', // an npm-install-like replace
      'echo new > node_modules/added.js',
      'echo "uid $(id -u)"',
      'touch "$READY"',
      'while [ ! -e "$GO" ]; do sleep 0.05; done',
    ].join(' && ');
    const run = startAsNobody(repo.root, repo.home, ['exec', 'one', '--', 'sh', '-c', script], {
      READY: ready,
      GO: go,
    });
    await waitForFile(ready, undefined, run);
    // While it runs: the overlay is in the run's mount table, and not in the host's.
    const inRun = pidsWithEnv('WARREN_WORKSPACE', one);
    expect(inRun.length).toBeGreaterThan(0);
    const runTable = fs.readFileSync(`/proc/${inRun[0]}/mountinfo`, 'utf8');
    expect(
      runTable
        .split('\n')
        .some(
          (l) =>
            l.split(' ')[4] === path.join(one, 'node_modules') &&
            l.includes(' - overlay ') &&
            l.includes(`upperdir=${upper}`),
        ),
    ).toBe(true);
    expect(hostOverlaysTouching(repo.base)).toEqual([]);
    expect(fs.readdirSync(path.join(one, 'node_modules'))).toEqual([]);
    fs.writeFileSync(go, '');
    const ran = await run.done;
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('module.exports = (s, n) => String(s).padStart(n);\nuid 65534\n');

    // Every change is in one's upper layer; the main checkout, the snapshot and two are as they were.
    expect(fs.readFileSync(path.join(upper, 'left-pad/index.js'), 'utf8')).toBe('patched\n');
    const whiteout = fs.lstatSync(path.join(upper, '.bin/left-pad'));
    expect(whiteout.isCharacterDevice() && whiteout.rdev === 0).toBe(true);
    expect(fs.readFileSync(path.join(upper, 'added.js'), 'utf8')).toBe('new\n');
    expect(fs.statSync(path.join(upper, 'added.js')).uid).toBe(NOBODY);
    expect(treeDigest(path.join(repo.root, 'node_modules'))).toBe(before);
    expect(treeDigest(lower)).toBe(lowerBefore);
    const seen = repo.warren([
      'exec',
      'two',
      '--',
      'sh',
      '-c',
      'cat node_modules/left-pad/index.js node_modules/dep/lib/main.js && readlink node_modules/.bin/left-pad',
    ]);
    expect(seen.code, seen.stderr).toBe(0);
    expect(seen.stdout).toBe('module.exports = (s, n) => String(s).padStart(n);\nexports.x = 1;\n../left-pad/cli.js\n');
    expect(hostOverlaysTouching(repo.base)).toEqual([]);

    const status = repo.json<{
      provisioned: { path: string; mode: string; changed: { path: string; change: string }[]; unknown?: string }[];
    }>(['status', 'one']);
    expect(status.provisioned[0]?.unknown).toBeUndefined();
    expect(status.provisioned[0]?.changed).toEqual([
      { path: 'node_modules/.bin/left-pad', change: 'deleted' },
      { path: 'node_modules/.setup-saw-it', change: 'added' },
      { path: 'node_modules/added.js', change: 'added' },
      { path: 'node_modules/dep/lib', change: 'deleted' },
      { path: 'node_modules/dep/node_modules', change: 'deleted' },
      { path: 'node_modules/dep/package.json', change: 'modified' },
      { path: 'node_modules/left-pad/index.js', change: 'modified' },
    ]);

    // --refresh drops one's private layer (kernel-made mode-000 work dir included) and starts clean.
    const refreshed = repo.warren(['provision', 'one', '--refresh']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(fs.readdirSync(upper)).toEqual([]);
    const fresh = repo.warren(['exec', 'one', '--', 'cat', 'node_modules/left-pad/index.js']);
    expect(fresh.stdout).toBe('module.exports = (s, n) => String(s).padStart(n);\n');

    // rm removes the workspace and its layers entirely, as nobody.
    const layers = path.dirname(path.dirname(upper));
    for (const id of ['one', 'two']) {
      const removed = repo.warren(['rm', id]);
      expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    }
    expect(fs.existsSync(one)).toBe(false);
    expect(fs.existsSync(two)).toBe(false);
    expect(fs.existsSync(layers)).toBe(false);
    expect(fs.readdirSync(path.dirname(layers))).toEqual([]);
    expect(treeDigest(path.join(repo.root, 'node_modules'))).toBe(before);
    expect(hostOverlaysTouching(repo.base)).toEqual([]);
  });

  it('a command run as nobody is held in a PID namespace: what it starts in the background does not outlive it', async () => {
    const repo = nobodyRepo(COW_YAML);
    const ws = repo.json<{ path: string }>(['new', 'feat', 'pids', '--no-setup']).path;
    const ready = path.join(repo.marks, 'ready');
    const go = path.join(repo.marks, 'go');
    const script =
      'setsid sleep 300 & (sh -c "sleep 301 &" &); sleep 0.1; touch "$READY"; while [ ! -e "$GO" ]; do sleep 0.05; done';
    const run = startAsNobody(repo.root, repo.home, ['exec', 'pids', '--', 'sh', '-c', script], {
      READY: ready,
      GO: go,
    });
    await waitForFile(ready, undefined, run);
    // The background sleeps may still be between fork and exec (setsid, the double fork) when READY appears.
    const sleeping = (): number[] =>
      pidsWithEnv('WARREN_WORKSPACE', ws).filter((pid) => {
        try {
          return ['sleep\x00300\x00', 'sleep\x00301\x00'].includes(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
        } catch {
          return false;
        }
      });
    await expect.poll(() => sleeping().length, { timeout: 15_000 }).toBe(2);
    const pids = pidsWithEnv('WARREN_WORKSPACE', ws);
    const sleepers = sleeping();
    // Run as nobody itself, not as the namespace's root.
    for (const pid of sleepers) expect(fs.statSync(`/proc/${pid}`).uid).toBe(NOBODY);
    fs.writeFileSync(go, '');
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).not.toContain('process group only');
    // The setsid'd and double-forked sleeps ended with the run: the kernel ended its namespace.
    expect(await waitUntilGone(pids)).toEqual([]);

    // On timeout too, a child that ignores SIGTERM included.
    fs.rmSync(ready);
    const late = startAsNobody(
      repo.root,
      repo.home,
      [
        'exec',
        'pids',
        '--timeout',
        '2s',
        '--',
        'sh',
        '-c',
        'trap "" TERM; setsid sleep 302 & touch "$READY"; sleep 300',
      ],
      { READY: ready },
    );
    await waitForFile(ready, undefined, late);
    const latePids = pidsWithEnv('WARREN_WORKSPACE', ws);
    expect(latePids.length).toBeGreaterThanOrEqual(2);
    expect((await late.done).code).toBe(124);
    expect(await waitUntilGone(latePids)).toEqual([]);

    // warren itself SIGKILLed: the death signal carries through both user namespaces to the run.
    fs.rmSync(ready);
    const killed = startAsNobody(
      repo.root,
      repo.home,
      ['exec', 'pids', '--', 'sh', '-c', 'trap "" TERM INT; setsid sleep 303 & touch "$READY"; sleep 300'],
      { READY: ready },
    );
    await waitForFile(ready, undefined, killed);
    const killedPids = pidsWithEnv('WARREN_WORKSPACE', ws);
    expect(killedPids.length).toBeGreaterThanOrEqual(2);
    killed.child.kill('SIGKILL'); // setpriv exec'd env, which exec'd node: this is warren
    await killed.done;
    expect(await waitUntilGone(killedPids)).toEqual([]);

    const db = new Database(path.join(repo.home, 'state.db'), { readonly: true });
    const rows = db.prepare('SELECT containment FROM runs').all() as { containment: string }[];
    db.close();
    expect(rows.map((r) => r.containment)).toEqual(['user-namespace', 'user-namespace', 'user-namespace']);
  });

  it.skipIf(bwrapUnavailable !== null)(
    'the bwrap sandbox, run as nobody inside the namespace, sees the layer and writes to it',
    () => {
      const repo = nobodyRepo(COW_YAML);
      const before = treeDigest(path.join(repo.root, 'node_modules'));
      repo.json(['new', 'feat', 'boxed', '--sandbox', 'bwrap', '--no-setup']);
      const [rec] = provisionOf(repo, 'boxed');
      const r = repo.warren([
        'exec',
        'boxed',
        '--',
        'sh',
        '-c',
        `cat node_modules/left-pad/index.js && echo boxed > node_modules/left-pad/index.js && id -u && (echo escaped > ${repo.root}/escaped || true)`,
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('module.exports = (s, n) => String(s).padStart(n);\n65534\n');
      expect(r.stderr).toContain('Read-only file system');
      expect(fs.readFileSync(path.join(rec?.upper ?? '', 'left-pad/index.js'), 'utf8')).toBe('boxed\n');
      expect(fs.existsSync(path.join(repo.root, 'escaped'))).toBe(false);
      expect(treeDigest(path.join(repo.root, 'node_modules'))).toBe(before);
      expect(hostOverlaysTouching(repo.base)).toEqual([]);
    },
  );

  it('exec looks a relative command or a bare name up where the layer is mounted, not on the host, where it is an empty folder', () => {
    const repo = nobodyRepo(COW_YAML);
    const ws = repo.json<{ path: string }>(['new', 'feat', 'bins']).path;
    expect(fs.readdirSync(path.join(ws, 'node_modules'))).toEqual([]);
    // The task's own left-pad, so that the main checkout's (which a lookup from warren's own folder would find) cannot pass for it.
    const own = repo.warren([
      'exec',
      'bins',
      '--',
      'sh',
      '-c',
      'printf "#!/usr/bin/env node\\nconsole.log(\\"the task\'s left-pad\\", process.argv[2])\\n" > node_modules/left-pad/cli.js',
    ]);
    expect(own.code, own.stderr).toBe(0);
    const hostPath = process.env.PATH ?? '/usr/bin:/bin';
    const cases: [string[], Record<string, string>][] = [
      [['./node_modules/.bin/left-pad', 'x'], {}],
      [['node_modules/.bin/left-pad', 'x'], {}],
      [['left-pad', 'x'], { PATH: `node_modules/.bin:${hostPath}` }],
      [['left-pad', 'x'], { PATH: `${ws}/node_modules/.bin:${hostPath}` }],
    ];
    for (const [argv, env] of cases) {
      const ran = repo.warren(['exec', 'bins', '--', ...argv], env);
      expect(ran.code, `${argv.join(' ')} ${JSON.stringify(env)}: ${ran.stderr}`).toBe(0);
      expect(ran.stdout).toBe("the task's left-pad x\n");
    }
    expect(fs.readFileSync(path.join(repo.root, 'node_modules/left-pad/cli.js'), 'utf8')).not.toContain("the task's");
    // Not in the layer either: refused in the run's namespace before the command starts, saying why.
    const missing = repo.warren(['exec', 'bins', '--', 'node_modules/.bin/nope']);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toContain(
      'command node_modules/.bin/nope was not found or is not executable, looked up where the copy-on-write layers are mounted; the command was not run',
    );
    // Said once: the run's own line, then warren's summary without repeating it.
    expect(missing.stderr.split('was not found or is not executable').length - 1, missing.stderr).toBe(1);
    expect(missing.stderr).toMatch(/warren: not run \(exit 127, said above\) after \d+ms; log /);
    const bare = repo.warren(['exec', 'bins', '--', 'nope'], { PATH: `${ws}/node_modules/.bin:${hostPath}` });
    expect(bare.code).toBe(127);
    // Nowhere a layer could hold it: refused on the host, nothing started, as before.
    const elsewhere = repo.warren(['exec', 'bins', '--', './nope']);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('command "./nope" was not found or is not executable; nothing was run.');
  });

  it('a layer that cannot be mounted for a run stops the run before its command, saying why', () => {
    const repo = nobodyRepo(COW_YAML);
    repo.json(['new', 'feat', 'broken', '--no-setup']);
    const [rec] = provisionOf(repo, 'broken');
    // The kernel refuses a lower layer that is not a directory.
    const lower = rec?.lower ?? '';
    fs.rmSync(lower, { recursive: true });
    fs.writeFileSync(lower, 'not a directory\n');
    const marker = path.join(repo.marks, 'ran');
    const r = repo.warren(['--json', 'exec', 'broken', '--', 'touch', marker]);
    expect(r.code).toBe(125);
    expect(fs.existsSync(marker)).toBe(false);
    const out = JSON.parse(r.stdout) as { reason: string };
    expect(out.reason).toMatch(
      /^could not mount overlay on \S+\/broken\/node_modules for this run: mount: .+; the command was not run$/,
    );
    expect(r.stderr).toContain('warren: could not mount overlay on');
  });

  it('WARREN_COW=off still falls back to a copy, saying why', () => {
    const repo = nobodyRepo(COW_YAML);
    const made = repo.warren(['--json', 'new', 'feat', 'off', '--no-setup'], { WARREN_COW: 'off' });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain('node_modules: cow fell back to cp -a because overlay disabled by WARREN_COW=off');
    const ws = (JSON.parse(made.stdout) as { path: string }).path;
    const [rec] = provisionOf(repo, 'off');
    expect(rec).toMatchObject({
      mode: 'copy',
      requested: 'cow',
      method: 'cp -a',
      fallback: 'overlay disabled by WARREN_COW=off',
    });
    expect(rec?.namespaced).toBeUndefined();
    expect(treeDigest(path.join(ws, 'node_modules'))).toBe(treeDigest(path.join(repo.root, 'node_modules')));
  });

  it('where user namespaces are not permitted (user.max_user_namespaces=0), cow falls back to a copy and runs to the process group, each saying why', async () => {
    const repo = nobodyRepo(COW_YAML);
    // The limit is set to 0 in a user namespace of our own (root there, the identity map), so
    // the host's setting is untouched: nobody, inside it, may not make another one.
    const made = await inCappedUserNamespace(nobodyArgv(repo.home, ['--json', 'new', 'feat', 'capped'], {}), repo.root);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toMatch(
      /node_modules: cow fell back to cp -a because not root, and commands cannot run in a user namespace here, so none would see a namespaced overlay \(not root, and unshare --user --pid is not permitted here: unshare: unshare failed: No space left on device\)/,
    );
    expect(made.stderr).toMatch(
      /held by its process group only \(not root, and unshare --user --pid is not permitted here/,
    );
    const [rec] = provisionOf(repo, 'capped');
    expect(rec).toMatchObject({ mode: 'copy', requested: 'cow' });
    expect(rec?.fallback).toMatch(/No space left on device/);
    expect(
      fs.readFileSync(
        path.join((JSON.parse(made.stdout) as { path: string }).path, 'node_modules/.setup-saw-it'),
        'utf8',
      ),
    ).toBe('exports.x = 1;\n');
  });
});

/**
 * Runs `setpriv ARGS` in a new user namespace that maps every id to itself and allows no
 * further user namespaces. The namespace's root sets the limit: the maps are written from
 * here once the child has unshared, then it execs (gaining its capabilities there) and writes 0.
 */
async function inCappedUserNamespace(setprivArgs: readonly string[], cwd: string): Promise<Cli> {
  const inner = 'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv "$@"';
  const child = spawn(
    'unshare',
    ['--user', '--', 'sh', '-c', `read go && exec sh -c '${inner}' capped "$@"`, 'wait', ...setprivArgs],
    { cwd, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<Cli>((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })),
  );
  const own = fs.statSync('/proc/self/ns/user').ino;
  const deadline = Date.now() + 10_000;
  while (fs.statSync(`/proc/${child.pid}/ns/user`).ino === own) {
    if (Date.now() > deadline) throw new Error('unshare --user did not make a namespace');
    await new Promise((r) => setTimeout(r, 10));
  }
  fs.writeFileSync(`/proc/${child.pid}/uid_map`, '0 0 4294967295\n');
  fs.writeFileSync(`/proc/${child.pid}/gid_map`, '0 0 4294967295\n');
  child.stdin.end('go\n');
  return done;
}
