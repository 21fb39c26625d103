import fs from 'node:fs';
import path from 'node:path';
import { bootKey, recall, remember } from './boot-cache.js';
import { runBounded } from './spawn.js';
import { isInside } from '../util/paths.js';
import { mountsUnder, type MountEntry } from './mounts.js';
import { isOverlayMount, overlayOptions } from './overlay.js';
import { MOUNT_FAILED_STATUS, type RunMount } from './run-mounts.js';
import { removeTreeOrThrow } from '../system/remove-tree.js';

/**
 * As root, the sandbox's uid 0 is not root outside. bwrap run by root maps the sandbox's uid 0
 * to the real uid 0: with every capability dropped, file and socket permissions still see
 * root as the owner (`/etc/shadow`, a host key, a docker socket, a socket in a 0700 folder).
 * So warren runs the sandbox in a user namespace whose uid 0 is SANDBOX_UID outside, and binds
 * what the sandbox may see through idmapped mounts (Linux 5.12, mount_setattr) that map the
 * files' owner, root, to that uid: inside, the workspace is the sandbox's own as before; on
 * disk, what the command writes is root's, so root's git and warren use it as they always did
 * (no "dubious ownership"). Everything else of the host is "other" to the sandbox.
 *
 * bwrap, running as that uid, could not reach a bound path below a folder only root may enter
 * (`/root` is 0700), so a small step before it, still root in the run's own mount namespace
 * (STAGE_SCRIPT), takes an idmapped clone of each path bwrap binds and mounts it on a tmpfs
 * over /tmp (`/tmp/0`, `/tmp/1`…), where bwrap, which gives the sandbox a /tmp of its own,
 * binds it from. Then it enters the user namespace as its uid 0 and runs bwrap, which makes its
 * own user namespace inside as it always did: nothing in the sandbox's namespaces maps uid 0.
 */

/**
 * The uid (and gid) the sandbox's root is outside, when warren runs as root: in none of the ranges
 * systemd hands out (https://systemd.io/UIDS-GIDS/: above the container range, below the
 * "foreign" one) nor the subordinate ranges useradd allocates (SUB_UID_MAX is 600100000).
 */
export const SANDBOX_UID = 1879048192;

/** Where the staged clones are mounted in the run's mount namespace (the sandbox has a /tmp of its own). */
export const STAGE_DIR = '/tmp';

/** The step's exit status and first words when it failed, as the mount step's (run-mounts.ts): the command was not run. */
const STAGE_FAILED_STATUS = MOUNT_FAILED_STATUS;
const STAGE_MARK = "warren: could not mount the sandbox's paths";

/** A path bwrap binds, cloned for the sandbox. */
export interface StagedSource {
  path: string;
  /** Its idmapped clone, bwrap's source. */
  at: string;
  /** A path the agent can change (the workspace, its git directory, what is pinned in them) is never followed if it is a link. */
  follow: boolean;
}

/**
 * Collects what a sandbox binds, and says where each is bound from. Pure: the clones are made
 * by the step STAGE_SCRIPT runs, from the list this builds.
 */
export class Staging {
  readonly sources: StagedSource[] = [];

  /** The clone bwrap binds `p` from. */
  source(p: string, follow: boolean): string {
    const at = path.join(STAGE_DIR, String(this.sources.length));
    this.sources.push({ path: p, at, follow });
    return at;
  }

  /**
   * A copy-on-write layer the run mounts (as root, only for a sandbox: provisioning makes them so),
   * made from idmapped clones of its layers, on its place in the workspace's clone. It is
   * mounted as the sandbox's uid, in a user namespace (`userxattr`), before bwrap binds the
   * workspace: its files are the sandbox's inside, root's on disk.
   */
  mount(m: RunMount): RunMount {
    const { lower, upper, work } = m.layers;
    const target = this.locate(m.target);
    // Overlay wants upper and work on one mount: their common folder is cloned as one.
    if (target === null || path.dirname(upper) !== path.dirname(work))
      throw new Error(`Staging.mount: ${m.target} is in no bound path, or its upper and work layers are apart`);
    const layers = this.source(path.dirname(upper), false);
    const staged = {
      lower: this.source(lower, false),
      upper: path.join(layers, path.basename(upper)),
      work: path.join(layers, path.basename(work)),
    };
    return { ...m, options: overlayOptions(staged.lower, staged.upper, staged.work, true), target, layers: staged };
  }

  /** Where `p`, inside a staged path, is found among the clones; null when it is in none of them. */
  locate(p: string): string | null {
    let best: StagedSource | null = null;
    for (const s of this.sources) {
      if (isInside(s.path, p) && (best === null || s.path.length > best.path.length)) best = s;
    }
    return best === null ? null : path.join(best.at, path.relative(best.path, p));
  }
}

/**
 * The system calls the step makes that are numbered per architecture, by `process.arch`:
 * unshare, setns, prctl, mount, setgroups, setresgid, setresuid (x86_64's table, and the generic
 * one of arm64, riscv64 and loongarch64). open_tree, move_mount and mount_setattr are numbered
 * alike everywhere (428, 429, 442).
 */
const SYSCALLS: Readonly<Record<string, readonly number[]>> = {
  x64: [272, 308, 157, 165, 116, 119, 117],
  arm64: [97, 268, 167, 40, 159, 149, 147],
  riscv64: [97, 268, 167, 40, 159, 149, 147],
  loong64: [97, 268, 167, 40, 159, 149, 147],
};

/**
 * perl (Essential in Debian; strict alone: POSIX costs 28 ms to load, warnings 7) for
 * the system calls no command of util-linux 2.38 makes. Run as root in the run's own mount
 * namespace, with `UID STAGE NUMBERS... [f|n PATH AT]... -- COMMAND...`:
 * 1. a child makes a user namespace; root writes its maps, `0 UID 1`, and keeps a handle on it;
 * 2. each PATH is cloned with what is mounted below it (`f`: followed if it is a link; `n`: a
 *    link is refused, and not followed: one put there meanwhile is cloned as the link itself,
 *    which bwrap resolves to its target as it is, not idmapped) and idmapped through that
 *    namespace (its root-owned files are UID's);
 * 3. a tmpfs goes on STAGE, and each clone on its AT there;
 * 4. it enters the namespace, becomes its uid and gid 0 (UID outside, no other group), sets the
 *    death signal again (a change of uid clears it) and runs COMMAND.
 * Any step that fails says which and why, on one line, and exits STAGE_FAILED_STATUS.
 */
const STAGE_SCRIPT = String.raw`use strict;
my ($uid, $stage) = splice @ARGV, 0, 2;
my ($UNSHARE, $SETNS, $PRCTL, $MOUNT, $SETGROUPS, $SETRESGID, $SETRESUID) = map { 0 + $_ } splice @ARGV, 0, 7;
sub fail { print STDERR "${STAGE_MARK} as uid $uid: $_[0]; the command was not run\n"; exit ${STAGE_FAILED_STATUS} }
my @src; while (@ARGV && $ARGV[0] ne '--') { push @src, [splice @ARGV, 0, 3] } shift @ARGV;
my $ppid = getppid();
pipe(my $r, my $w) && pipe(my $r2, my $w2) or fail("pipe: $!");
my $pid = fork() // fail("fork: $!");
if (!$pid) { close $r; close $w2; syswrite $w, syscall($UNSHARE, 0x10000000) == 0 ? 'u' : "unshare: $!"; sysread $r2, my $x, 1; exit 0 }
close $w; close $r2;
my $said = ''; sysread $r, $said, 200;
$said eq 'u' or fail("a user namespace: " . ($said || 'the child said nothing'));
for my $map ('uid_map', 'gid_map') {
  my $f;
  open($f, '>', "/proc/$pid/$map") && (print $f "0 $uid 1\n") && close($f) or fail("a user namespace: $map: $!");
}
open(my $ns, '<', "/proc/$pid/ns/user") or fail("a user namespace: $!");
close $w2; waitpid $pid, 0;
my $none = ''; my @fd;
for (@src) {
  my ($how, $p, $at) = @$_;
  $how eq 'n' && -l $p and fail("$p is a symbolic link");
  my $fd = syscall(428, -100, $p, 0x1 | 0x80000 | 0x8000 | ($how eq 'n' ? 0x100 : 0));
  $fd >= 0 or fail("$p: open_tree: $!");
  my $attr = pack('QQQQ', 0x100000, 0, 0, fileno $ns);
  syscall(442, $fd, $none, 0x1000 | 0x8000, $attr, length $attr) == 0 or fail("$p: an idmapped mount: $!");
  push @fd, [$fd, $at, -d $p];
}
my ($src, $type, $data) = ('warren-sandbox', 'tmpfs', 'mode=0755');
syscall($MOUNT, $src, $stage, $type, 0x6, $data) == 0 or fail("$stage: a tmpfs: $!");
for (@fd) {
  my ($fd, $at, $dir) = @$_;
  ($dir ? mkdir($at) : open(my $f, '>', $at)) or fail("$at: $!");
  syscall(429, $fd, $none, -100, $at, 0x4) == 0 or fail("$at: move_mount: $!");
}
syscall($SETNS, fileno $ns, 0x10000000) == 0 or fail("entering the user namespace: $!");
close $ns;
syscall($SETGROUPS, 0, 0) == 0 && syscall($SETRESGID, 0, 0, 0) == 0 && syscall($SETRESUID, 0, 0, 0) == 0
  or fail("becoming its uid 0: $!");
syscall($PRCTL, 1, 9) == 0 or fail("prctl: $!");
getppid() == $ppid or exit ${STAGE_FAILED_STATUS};
exec { $ARGV[0] } @ARGV or fail("$ARGV[0]: $!");
`;

/** The argv prefix that stages `sources` and runs what follows it as the sandbox's uid (in a mount namespace of its own). */
export function stageArgv(sources: readonly StagedSource[], uid = SANDBOX_UID): string[] {
  const numbers = SYSCALLS[process.arch];
  if (!numbers)
    throw new Error(`stageArgv: no system call numbers for ${process.arch} (sandboxUidProblem says so first)`);
  return [
    'perl',
    '-e',
    STAGE_SCRIPT,
    String(uid),
    STAGE_DIR,
    ...numbers.map(String),
    ...sources.flatMap((s) => [s.follow ? 'f' : 'n', s.path, s.at]),
    '--',
  ];
}

/**
 * The overlays mounted for every process (root's cow layers and checkouts) at or below what the
 * sandbox writes: overlayfs has no idmapped mounts, so none of them can be given to the
 * sandbox's uid. Pure given the mount table.
 */
export function unmappableMounts(writable: readonly string[], table: readonly MountEntry[]): string[] {
  return writable.flatMap((p) =>
    mountsUnder(table, p)
      .filter(isOverlayMount)
      .map((m) => m.mountPoint),
  );
}

/** Whether the sandbox maps its root to SANDBOX_UID: when warren runs as root. */
export function sandboxMapsRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * Who else holds `uid` here, or null: an entry of /etc/passwd or /etc/group, or a subordinate
 * range of /etc/subuid or /etc/subgid. Pure given the files' text.
 */
export function uidHolder(uid: number, files: Record<string, string>): string | null {
  for (const [file, text] of Object.entries(files)) {
    for (const line of text.split('\n')) {
      const f = line.split(':');
      if (f.length < 3 || line.startsWith('#')) continue;
      const sub = file.endsWith('/subuid') || file.endsWith('/subgid');
      const start = Number(f[sub ? 1 : 2]);
      const count = sub ? Number(f[2]) : 1;
      if (Number.isInteger(start) && uid >= start && uid < start + count) return `${f[0]} in ${file}`;
    }
  }
  return null;
}

const ID_FILES = ['/etc/passwd', '/etc/group', '/etc/subuid', '/etc/subgid'];

function readIdFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ID_FILES) {
    try {
      out[f] = fs.readFileSync(f, 'utf8');
    } catch {
      // absent: nobody is in it
    }
  }
  return out;
}

/** Per process, by PATH (which perl, unshare and setpriv are found). */
const probed = new Map<string, string | null>();

/**
 * Null when the sandbox can map root to SANDBOX_UID here, else why not: the uid is someone
 * else's, or the step itself fails (no perl, no idmapped mounts on this kernel or on the file
 * system under `home`). Tried for real once per process; a success is remembered under
 * `$WARREN_HOME/cache` for as long as the boot and namespaces are the same (boot-cache.ts).
 */
export async function sandboxUidProblem(home: string): Promise<string | null> {
  const holder = uidHolder(SANDBOX_UID, readIdFiles());
  if (holder !== null)
    return `uid ${SANDBOX_UID}, which the sandbox's root is outside, is already ${holder}, who would share its files with the sandbox`;
  if (!SYSCALLS[process.arch])
    return `warren knows the system call numbers it needs for ${Object.keys(SYSCALLS).join(', ')}, not ${process.arch}`;
  const where = process.env.PATH ?? '';
  const known = probed.get(where);
  if (known !== undefined) return known;
  const cacheDir = path.join(home, 'cache');
  let dev = '-';
  try {
    dev = String(fs.statSync(home).dev);
  } catch {
    // not made yet: the probe makes it
  }
  const key = bootKey([home, dev]);
  const found = recall(cacheDir, 'sandbox-uid', key, (v): v is true => v === true) ? null : await probe(home);
  if (found === null) remember(cacheDir, 'sandbox-uid', key, true);
  probed.set(where, found);
  return found;
}

/** The step itself, on a folder under `home`: a file made through the clone must be root's on disk. */
async function probe(home: string): Promise<string | null> {
  fs.mkdirSync(home, { recursive: true });
  const dir = fs.mkdtempSync(path.join(home, '.sandbox-uid-probe-'));
  try {
    const staging = new Staging();
    const at = staging.source(dir, false);
    const result = await runBounded({
      argv: [
        'setpriv',
        '--pdeathsig',
        'KILL',
        '--',
        'unshare',
        '--mount',
        '--',
        ...stageArgv(staging.sources),
        'sh',
        '-c',
        'test "$(id -u)" = 0 && touch "$1/made"',
        'probe',
        at,
      ],
      stdout: 'ignore',
      stderr: 'collect',
      timeoutMs: 10_000,
    });
    if (result.spawnError) return `setpriv/unshare unavailable (${result.spawnError.message})`;
    if (result.timedOut) return 'the probe did not finish within 10 s';
    const said = result.stderr.toString('utf8').trim().split('\n')[0];
    if (result.exitCode !== 0) return said || `the probe exited ${result.exitCode ?? result.signal}`;
    const made = fs.statSync(path.join(dir, 'made'), { throwIfNoEntry: false });
    if (made?.uid !== 0) return `a file made through the idmapped clone is not root's on disk (uid ${made?.uid})`;
    return null;
  } finally {
    removeTreeOrThrow(dir, { inside: home });
  }
}

/** For people: what the sandbox's uid is, in a hint. */
export function sandboxUidHint(): string {
  return `As root, a bwrap sandbox runs its commands as uid ${SANDBOX_UID} (its own root inside), which needs perl, unshare (util-linux) and idmapped mounts (Linux 5.12, on the file systems of the workspace and of WARREN_HOME; tmpfs since 6.3). Run warren as a user who is not root, or set \`sandbox: none\` for this project.`;
}
