import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { leftOut, QUICK } from './tier.js';

/**
 * What some tests need from the machine beyond Node and git. Each capability has a probe that
 * tries the real thing, cheaply. A test that needs one skips where its probe says no, prints
 * why and what to install, and records the skip under artifacts/skips/. `.ci/run` asks its own
 * probe (.ci/probe, written apart on purpose) about every recorded skip and fails the build on
 * one this machine could have run. docs/testing.md lists them.
 */

/** Where a probe looks: tests point these elsewhere to see a probe report what is missing. */
export interface ProbeOptions {
  /** The PATH binaries are found on. */
  PATH: string;
  /** The browser the dashboard tests launch (Debian's, never a downloaded one). */
  chromium: string;
}

interface Capability {
  /** Null when this machine has it, else why not. */
  probe(options: ProbeOptions): string | null;
  /** What makes it available on Debian 12. */
  install: string;
}

export const DEFAULT_PROBE_OPTIONS: ProbeOptions = { PATH: process.env.PATH ?? '', chromium: '/usr/bin/chromium' };

const NOBODY = 65534;
const AS_NOBODY = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--'];
/** xfsprogs refuses to make a file system smaller than 300 MiB; the image is sparse. */
const XFS_IMAGE_BYTES = 300 * 1024 * 1024;

/** Runs argv with `options.PATH`; null when it exits 0, else why not (naming a missing binary). */
function tryRun(options: ProbeOptions, argv: readonly string[]): string | null {
  const [cmd, ...args] = argv;
  if (cmd === undefined) throw new Error('tryRun: empty argv');
  const r = spawnSync(cmd, args, {
    env: { ...process.env, PATH: options.PATH, LC_ALL: 'C' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
    return `${cmd} is not installed (not found on PATH)`;
  if (r.error) return `${argv.join(' ')} could not run: ${r.error.message}`;
  if (r.status === 0) return null;
  return `${argv.join(' ')} failed: ${r.stderr.trim() || `exit ${r.status ?? r.signal}`}`;
}

const notRoot = (why: string): string | null => (process.getuid?.() === 0 ? null : `not root: ${why}`);

/**
 * Runs `fn` in a fresh temp dir, removed afterwards: a probe mounts on `m` and makes `f`
 * immutable, and a probe that failed halfway may have left either.
 */
function inTempDir(prefix: string, fn: (dir: string) => string | null): string | null {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `warren-probe-${prefix}-`)));
  try {
    return fn(dir);
  } finally {
    const mounted = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[4] === path.join(dir, 'm'));
    if (mounted) spawnSync('umount', [path.join(dir, 'm')], { stdio: 'ignore' });
    if (fs.existsSync(path.join(dir, 'f'))) spawnSync('chattr', ['-i', path.join(dir, 'f')], { stdio: 'ignore' });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function mountOverlay(options: ProbeOptions): string | null {
  return (
    notRoot('a global overlay mount needs root') ??
    inTempDir('overlay', (dir) => {
      for (const d of ['l', 'u', 'w', 'm']) fs.mkdirSync(path.join(dir, d));
      return (
        tryRun(options, [
          'mount',
          '-t',
          'overlay',
          'overlay',
          '-o',
          `lowerdir=${dir}/l,upperdir=${dir}/u,workdir=${dir}/w`,
          `${dir}/m`,
        ]) ?? tryRun(options, ['umount', `${dir}/m`])
      );
    })
  );
}

function switchToNobody(options: ProbeOptions): string | null {
  return notRoot('only root can switch to another user') ?? tryRun(options, ['setpriv', ...AS_NOBODY, 'true']);
}

/**
 * The way warren does it without root: uid 65534 mounts overlay in a user namespace of its own,
 * then runs a command as itself in a PID namespace inside it.
 */
function mountOverlayInUserNamespace(options: ProbeOptions): string | null {
  return (
    switchToNobody(options) ??
    inTempDir('userns', (dir) => {
      fs.chmodSync(dir, 0o755);
      for (const d of ['l/d', 'u', 'w', 'm']) fs.mkdirSync(path.join(dir, d), { recursive: true });
      for (const d of ['', 'l', 'l/d', 'u', 'w', 'm']) fs.chownSync(path.join(dir, d), NOBODY, NOBODY);
      const script = `mount -t overlay overlay -o "userxattr,lowerdir=$1/l,upperdir=$1/u,workdir=$1/w" "$1/m" && rmdir "$1/m/d" && exec unshare --user --map-user=${NOBODY} --map-group=${NOBODY} -- true`;
      const why = tryRun(options, [
        'setpriv',
        ...AS_NOBODY,
        'unshare',
        '--user',
        '--map-root-user',
        '--mount',
        '--pid',
        '--fork',
        '--kill-child',
        '--mount-proc',
        '--',
        'sh',
        '-c',
        script,
        'probe',
        dir,
      ]);
      return why && `uid ${NOBODY} cannot mount overlay in a user namespace: ${why}`;
    })
  );
}

/** warren's non-root cow: uid 65534 mounts fuse-overlayfs on the host, deletes through it, and unmounts. */
function mountFuseOverlay(options: ProbeOptions): string | null {
  return (
    switchToNobody(options) ??
    inTempDir('fuse', (dir) => {
      fs.chmodSync(dir, 0o755);
      for (const d of ['l/d', 'u', 'w', 'm']) fs.mkdirSync(path.join(dir, d), { recursive: true });
      for (const d of ['', 'l', 'l/d', 'u', 'w', 'm']) fs.chownSync(path.join(dir, d), NOBODY, NOBODY);
      const script =
        'fuse-overlayfs -o "lowerdir=$1/l,upperdir=$1/u,workdir=$1/w" "$1/m" && rmdir "$1/m/d"; s=$?; fusermount3 -u "$1/m"; exit $s';
      const why = tryRun(options, ['setpriv', ...AS_NOBODY, 'sh', '-c', script, 'probe', dir]);
      return why && `uid ${NOBODY} cannot mount fuse-overlayfs: ${why}`;
    })
  );
}

function loopMountXfs(options: ProbeOptions): string | null {
  return (
    notRoot('a loop mount needs root') ??
    inTempDir('xfs', (dir) => {
      const image = path.join(dir, 'xfs.img');
      fs.mkdirSync(path.join(dir, 'm'));
      fs.writeFileSync(image, '');
      fs.truncateSync(image, XFS_IMAGE_BYTES);
      return (
        tryRun(options, ['mkfs.xfs', '-q', '-m', 'reflink=1', image]) ??
        tryRun(options, ['mount', '-o', 'loop', image, `${dir}/m`]) ??
        tryRun(options, ['umount', `${dir}/m`])
      );
    })
  );
}

function makeImmutable(options: ProbeOptions): string | null {
  return (
    notRoot('chattr +i needs CAP_LINUX_IMMUTABLE') ??
    inTempDir('chattr', (dir) => {
      fs.writeFileSync(path.join(dir, 'f'), '');
      const why = tryRun(options, ['chattr', '+i', `${dir}/f`]) ?? tryRun(options, ['chattr', '-i', `${dir}/f`]);
      // It ran and failed: most often the file system, not chattr.
      return why && /^chattr [+-]i /.test(why)
        ? `${why} (is ${os.tmpdir()} on a file system without immutable files, such as tmpfs?)`
        : why;
    })
  );
}

function mountTmpfs(options: ProbeOptions): string | null {
  return (
    notRoot('mount needs root') ??
    inTempDir('tmpfs', (dir) => {
      fs.mkdirSync(path.join(dir, 'm'));
      return tryRun(options, ['mount', '-t', 'tmpfs', 'tmpfs', `${dir}/m`]) ?? tryRun(options, ['umount', `${dir}/m`]);
    })
  );
}

function runChromium(options: ProbeOptions): string | null {
  if (!fs.existsSync(options.chromium)) return `${options.chromium} does not exist`;
  const r = spawnSync(options.chromium, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status === 0 && /Chromium \d+/.test(r.stdout)) return null;
  return `${options.chromium} --version failed: ${(r.stderr || r.stdout || r.error?.message || `exit ${r.status}`).trim()}`;
}

function readProtectedHardlinks(): string | null {
  const value = fs.readFileSync('/proc/sys/fs/protected_hardlinks', 'utf8').trim();
  return value === '1' ? null : `fs.protected_hardlinks is ${value}, not 1`;
}

function readProcIo(): string | null {
  try {
    fs.readFileSync('/proc/self/io', 'utf8');
    return null;
  } catch (err) {
    return `/proc/self/io cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): this kernel has no per-process I/O accounting`;
  }
}

/** Listens on ::1 in a child process: a container may have IPv6 switched off, loopback included. */
function listenOnIpv6Loopback(): string | null {
  const script =
    "require('net').createServer().on('error', (e) => { console.error(e.code); process.exit(1); }).listen(0, '::1', function () { this.close(); })";
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
  return r.status === 0
    ? null
    : `cannot listen on ::1 (${r.stderr.trim() || `exit ${r.status ?? r.signal}`}): IPv6 is off on the loopback interface`;
}

/** The real agent CLIs, installed at pinned versions into test/agent-clis by .ci/run. */
export const AGENT_CLI_BIN = path.resolve(import.meta.dirname, '../agent-clis/node_modules/.bin');
const AGENT_CLI_INSTALL =
  'npm ci --prefix test/agent-clis --ignore-scripts && npm rebuild --prefix test/agent-clis @anthropic-ai/claude-code (as .ci/run does)';

function runAgentCli(name: string): string | null {
  const bin = path.join(AGENT_CLI_BIN, name);
  if (!fs.existsSync(bin)) return `${bin} is not installed`;
  const r = spawnSync(bin, ['--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return r.status === 0
    ? null
    : `${bin} --version failed: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`;
}

/**
 * The real yarns, installed at pinned versions into test/package-managers by .ci/run: classic
 * (the `yarn` package, 1.x) and berry (`@yarnpkg/cli-dist`, 4.x), each run as `node BIN`.
 */
const PACKAGE_MANAGERS = path.resolve(import.meta.dirname, '../package-managers/node_modules');
export const YARN_CLASSIC = path.join(PACKAGE_MANAGERS, 'yarn/bin/yarn.js');
export const YARN_BERRY = path.join(PACKAGE_MANAGERS, '@yarnpkg/cli-dist/bin/yarn.js');
const PACKAGE_MANAGERS_INSTALL = 'npm ci --prefix test/package-managers --ignore-scripts (as .ci/run does)';

/** Runs `node BIN --version` in an empty folder and wants the major version `major`. */
function runYarn(bin: string, major: number): string | null {
  if (!fs.existsSync(bin)) return `${bin} is not installed`;
  return inTempDir('yarn', (dir) => {
    const r = spawnSync(process.execPath, [bin, '--version'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, HOME: dir, YARN_IGNORE_PATH: '1' },
    });
    if (r.status !== 0)
      return `node ${bin} --version failed: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`;
    const version = r.stdout.trim();
    return version.split('.')[0] === String(major) ? null : `${bin} is yarn ${version}, not ${major}.x`;
  });
}

/** The deps-20k fixture (a real tree of about 20,000 files) and the npm cache .ci/deps-20k fills for it. */
export const DEPS_20K_CACHE = path.resolve(import.meta.dirname, '../../.bench-cache/npm-cache');
const DEPS_20K_INSTALL =
  '.ci/deps-20k (an online npm ci of the fixture, once; as .ci/run does), with the fixture in shared/fixtures/deps-20k above the repository or $WARREN_DEPS_20K';

/** The fixture's folder: $WARREN_DEPS_20K, else shared/fixtures/deps-20k in the nearest folder above the repository that has one. */
export function deps20kFixture(): string | null {
  const env = process.env.WARREN_DEPS_20K;
  if (env) return fs.existsSync(path.join(env, 'package-lock.json')) ? env : null;
  for (let d = path.resolve(import.meta.dirname, '../..'); d !== path.dirname(d);) {
    d = path.dirname(d);
    const fixture = path.join(d, 'shared/fixtures/deps-20k');
    if (fs.existsSync(path.join(fixture, 'package-lock.json'))) return fixture;
  }
  return null;
}

function findDeps20k(): string | null {
  const fixture = deps20kFixture();
  if (fixture === null)
    return 'no deps-20k fixture: neither $WARREN_DEPS_20K nor shared/fixtures/deps-20k above the repository';
  const hash = createHash('sha256')
    .update(fs.readFileSync(path.join(fixture, 'package-lock.json')))
    .digest('hex')
    .slice(0, 16);
  const marker = path.join(DEPS_20K_CACHE, `deps-20k-${hash}.ok`);
  return fs.existsSync(marker) ? null : `the npm cache for ${fixture} is not filled (${marker} is missing)`;
}

/** Each capability: what the tests use it for (the comment), its probe, and what installs it. */
export const CAPABILITIES = {
  // The bwrap sandbox (warren exec/run with sandbox: bwrap)
  bwrap: {
    // The namespaces and mounts warren's own sandbox argv asks for (src/run/sandbox.ts).
    probe: (o) =>
      tryRun(o, [
        'bwrap',
        '--die-with-parent',
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--new-session',
        '--unshare-net',
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--',
        'true',
      ]),
    install: 'apt-get install bubblewrap',
  },
  // `sandbox: container` (src/run/container/): a container of an image of links into the host's /usr
  podman: {
    probe: (o) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-podman-probe-'));
      try {
        fs.mkdirSync(path.join(dir, 'usr'));
        for (const l of ['lib', 'lib64', 'bin']) fs.symlinkSync(`usr/${l}`, path.join(dir, l));
        const tar = path.join(os.tmpdir(), `${path.basename(dir)}.tar`);
        const packed = tryRun(o, ['tar', '-C', dir, '-cf', tar, '.']);
        if (packed) return packed;
        try {
          return (
            tryRun(o, ['podman', 'import', '-q', tar, 'localhost/warren-probe:1']) ??
            tryRun(o, [
              'podman',
              'run',
              '--rm',
              '--network',
              'none',
              '--cap-drop',
              'all',
              '--read-only',
              '-v',
              '/usr:/usr:ro',
              'localhost/warren-probe:1',
              '/usr/bin/true',
            ])
          );
        } finally {
          fs.rmSync(tar, { force: true });
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    install:
      'apt-get install podman runc slirp4netns uidmap, and in /etc/containers/containers.conf `[containers] default_ulimits = []` and `[engine] runtime = "runc"` (as .ci/run does)',
  },
  // A second local user behind sshd on loopback: the SSH runner's "other machine" (test/run/ssh-runner.test.ts).
  sshd: {
    probe: (o) =>
      notRoot('the test makes a local user for the host') ??
      (fs.existsSync('/usr/sbin/sshd') ? null : '/usr/sbin/sshd is not installed') ??
      tryRun(o, ['ssh', '-V']) ??
      keygenProbe(o),
    install: 'apt-get install openssh-server openssh-client (as .ci/run does); run the tests as root',
  },
  // The dashboard's browser tests (headless Chromium through playwright-core)
  chromium: {
    probe: runChromium,
    install: 'apt-get install chromium',
  },
  // cow provisioning as root: a real overlay mount
  'overlay-root': {
    probe: mountOverlay,
    install: 'run the tests as root on a kernel with overlayfs (a container needs CAP_SYS_ADMIN)',
  },
  // cow provisioning without root: overlay in a user namespace, as uid 65534
  'overlay-userns': {
    probe: mountOverlayInUserNamespace,
    install:
      'apt-get install util-linux, and run the tests as root (to switch to uid 65534) on Linux 5.11 or later with user namespaces allowed (sysctl kernel.unprivileged_userns_clone=1)',
  },
  // cow without root, seen by the user's own processes: fuse-overlayfs as uid 65534
  'fuse-overlayfs': {
    probe: mountFuseOverlay,
    install:
      "apt-get install fuse-overlayfs (and /dev/fuse usable by users: mode 0666, as Debian's udev makes it), and run the tests as root (to switch to uid 65534)",
  },
  // copy's clone (reflink) rung: an XFS image on a loop device
  xfs: {
    probe: loopMountXfs,
    install: 'apt-get install xfsprogs, and run the tests as root with loop devices (/dev/loop-control)',
  },
  // Tests run as an unprivileged user: root switching to uid 65534 with setpriv
  nobody: {
    probe: switchToNobody,
    install: 'apt-get install util-linux, and run the tests as root',
  },
  // The kernel's refusal to hard-link another user's file, which hardlink provisioning works around
  'protected-hardlinks': {
    probe: readProtectedHardlinks,
    install: 'sysctl -w fs.protected_hardlinks=1',
  },
  // An undeletable (immutable) file in a workspace
  chattr: {
    probe: makeImmutable,
    install: 'apt-get install e2fsprogs, and run the tests as root with TMPDIR on ext4 or xfs',
  },
  // A mount inside a workspace
  'tmpfs-mount': {
    probe: mountTmpfs,
    install: 'run the tests as root (a container needs CAP_SYS_ADMIN)',
  },
  // warren's containment of each run (setpriv --pdeathsig)
  setpriv: {
    probe: (o) => tryRun(o, ['setpriv', '--version']),
    install: 'apt-get install util-linux',
  },
  // A person at a terminal: a command run on a pseudo-terminal by util-linux's `script` (warren trust's question)
  pty: {
    probe: (o) => tryRun(o, ['script', '-qec', 'test -t 0 && test -t 2', '/dev/null']),
    install: 'apt-get install util-linux',
  },
  // The dashboard on IPv6 loopback (serve --host [::1])
  'ipv6-loopback': {
    probe: listenOnIpv6Loopback,
    install: 'switch IPv6 on for the loopback interface (sysctl -w net.ipv6.conf.lo.disable_ipv6=0)',
  },
  // The real agent CLIs against a scripted model server (test/agents-real.test.ts)
  'claude-cli': { probe: () => runAgentCli('claude'), install: AGENT_CLI_INSTALL },
  'codex-cli': { probe: () => runAgentCli('codex'), install: AGENT_CLI_INSTALL },
  'gemini-cli': { probe: () => runAgentCli('gemini'), install: AGENT_CLI_INSTALL },
  // Progress of long copies (bytes written, from /proc/PID/io)
  'proc-io': {
    probe: readProcIo,
    install: "a Linux kernel built with CONFIG_TASK_IO_ACCOUNTING (Debian's is)",
  },
  // A real PostgreSQL server: warren's own cluster, made by initdb (Debian's postgresql, /usr/lib/postgresql/N/bin)
  postgres: {
    probe: (o) => {
      const dir = fs.existsSync('/usr/lib/postgresql')
        ? fs
            .readdirSync('/usr/lib/postgresql')
            .map((v) => path.join('/usr/lib/postgresql', v, 'bin'))
            .find((d) => fs.existsSync(path.join(d, 'initdb')))
        : undefined;
      return dir ? tryRun(o, [path.join(dir, 'postgres'), '--version']) : tryRun(o, ['initdb', '--version']);
    },
    install: 'apt-get install postgresql',
  },
  // A real redis-server per task
  redis: {
    probe: (o) => tryRun(o, ['redis-server', '--version']),
    install: 'apt-get install redis-server',
  },
  // `warren completion zsh` loaded and run in a real zsh
  zsh: {
    probe: (o) => tryRun(o, ['zsh', '-fc', 'autoload -U compinit && compinit -u -D']),
    install: 'apt-get install zsh',
  },
  // `warren completion fish` loaded and run in a real fish
  fish: {
    probe: (o) => tryRun(o, ['fish', '--no-config', '-c', 'complete -C"true "']),
    install: 'apt-get install fish',
  },
  // A real Python venv (venv + ensurepip, which Debian ships apart in python3-venv): trees that name the main checkout by absolute path
  'python-venv': {
    // Debian's python3 where there is one, as test/helpers/ecosystems.ts uses.
    probe: (o) =>
      tryRun(o, [fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', '-c', 'import venv, ensurepip']),
    install: 'apt-get install python3-venv',
  },
  // A real pnpm 9 or later, offline with local packages: installs whose snapshots must match their key, and .bin shims that name the checkout by absolute path
  pnpm: {
    probe: (o) =>
      tryRun(o, ['pnpm', '--version']) ?? tryRun(o, ['sh', '-c', 'test "$(pnpm --version | cut -d. -f1)" -ge 9']),
    install: 'npm install -g pnpm@9',
  },
  // Real yarn classic (1.x), offline with local packages: installs whose snapshots must match their key, by .yarn-integrity
  'yarn-classic': { probe: () => runYarn(YARN_CLASSIC, 1), install: PACKAGE_MANAGERS_INSTALL },
  // Real yarn berry (4.x, nodeLinker: node-modules), offline with local packages: the same, by .yarn-state.yml
  'yarn-berry': { probe: () => runYarn(YARN_BERRY, 4), install: PACKAGE_MANAGERS_INSTALL },
  // The real deps-20k tree, installed offline from an npm cache: a snapshot of 20,000 files that must match its key
  'deps-20k': { probe: findDeps20k, install: DEPS_20K_INSTALL },
} satisfies Record<string, Capability>;

export type CapabilityName = keyof typeof CAPABILITIES;

/** What a test records when it skips, one file per suite and capability. */
export interface SkipRecord {
  /** The test file, relative to test/, without `.test.ts` (e.g. `workspace/rm`). */
  suite: string;
  capability: CapabilityName;
  reason: string;
  install: string;
}

/** What the quick tier may use: what warren itself needs (util-linux's setpriv and script) and the kernel's own features. */
const QUICK_CAPABILITIES: readonly CapabilityName[] = ['setpriv', 'pty', 'proc-io', 'ipv6-loopback'];

const SKIPS_DIR = path.resolve(import.meta.dirname, '../../artifacts/skips');
const TEST_DIR = path.resolve(import.meta.dirname, '..');

const probed = new Map<CapabilityName, string | null>();

/** Probes a capability on this machine, as it is set up for this process (each once per process). */
export function probe(name: CapabilityName): string | null {
  let reason = probed.get(name);
  if (reason === undefined) {
    reason =
      process.platform === 'linux'
        ? CAPABILITIES[name].probe(DEFAULT_PROBE_OPTIONS)
        : `Linux only (this is ${process.platform})`;
    probed.set(name, reason);
  }
  return reason;
}

const reported = new Set<string>();

/**
 * Why the tests in `testFile` that need `name` cannot run here, or null when they can. Where
 * they cannot, prints the reason and what installs it, once, and records the skip for `.ci/run`.
 */
export function unavailable(testFile: string, name: CapabilityName): string | null {
  const suite = path.relative(TEST_DIR, testFile).replace(/\.test\.ts$/, '');
  if (QUICK && !QUICK_CAPABILITIES.includes(name)) {
    leftOut(suite, name);
    return `the quick tier leaves out what needs ${name}`;
  }
  const reason = probe(name);
  if (reason === null) return null;
  const key = `${suite}\0${name}`;
  if (!reported.has(key)) {
    reported.add(key);
    const { install } = CAPABILITIES[name];
    console.warn(`[${suite}] skipped, needs ${name}: ${reason} — to run it: ${install}`);
    recordSkip(SKIPS_DIR, { suite, capability: name, reason, install });
  }
  return reason;
}

export function skipFile(dir: string, suite: string, capability: CapabilityName): string {
  return path.join(dir, `${suite.replaceAll('/', '__')}.${capability}.json`);
}

export function recordSkip(dir: string, record: SkipRecord): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = skipFile(dir, record.suite, record.capability);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(record) + '\n');
  fs.renameSync(`${file}.tmp`, file);
}

/** `ssh-keygen` makes a key, in a folder removed afterwards. */
function keygenProbe(o: Parameters<typeof tryRun>[0]): string | null {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-sshd-probe-'));
  try {
    return tryRun(o, ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'k')]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
