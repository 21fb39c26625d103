import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { egressAllowOf, sandboxKindFor, type SandboxKind } from '../config/sandbox.js';
import { runBounded } from '../system/spawn.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { readMounts } from '../system/mounts.js';
import { assertPodman } from './container/podman.js';
import {
  sandboxMapsRoot,
  sandboxUidHint,
  sandboxUidProblem,
  unmappableMounts,
  type Staging,
} from '../system/sandbox-uid.js';
import { modeKind } from '../provision/modes/kinds.js';

export interface SandboxProfile {
  kind: SandboxKind;
  /** May the command reach the network? Without it, a bwrap sandbox has loopback only. */
  network: boolean;
  /** bwrap with an egress allowlist: connections leave only through warren's proxy, to these hosts (egress.ts). Null: none. */
  allow: string[] | null;
  /**
   * Folders replaced by an empty, read-only tmpfs first, before anything is bound back: the user's home,
   * WARREN_HOME (other tasks' workspaces and agent state, the policy key, the state database),
   * the workspace root and the main checkout (its ignored files: a .env).
   */
  masked: string[];
  /**
   * Bound back read-only over the masks (and the private /tmp): the main checkout's git
   * directory (objects, refs, config, hooks), what a `share`d path points at, and the
   * home-folder entries the toolchains and git need (`sandbox_home`).
   */
  readable: string[];
  /** Bound back writable: the workspace and its private git directory (with an agent, its state folder). */
  writable: string[];
  /**
   * Files bound read-only over what the workspace can write: what git reads to find the
   * repository and the per-worktree configuration, so that a command cannot point git at code.
   */
  pinned: string[];
}

/**
 * What a sandboxed command may read of the user's home folder when `$WARREN_HOME/config.yaml`
 * does not say (`sandbox_home`): git's own settings and the usual per-user toolchains. Secrets
 * (~/.ssh, ~/.aws, ~/.config/gh, ~/.npmrc, ~/.netrc, ~/.cargo/credentials.toml…) are not in it.
 */
export const SANDBOX_HOME: readonly string[] = [
  '.gitconfig',
  '.config/git',
  '.nvm',
  '.volta',
  '.asdf',
  '.pyenv',
  '.rbenv',
  '.bun',
  '.deno',
  '.cargo/bin',
  '.rustup',
  '.local/bin',
  'go/bin',
  '.sdkman',
];

const NO_SANDBOX = { masked: [], readable: [], writable: [], pinned: [] };

/** What one process of the task may reach beyond the task's own: the boundary's (src/run/boundary.ts). */
export interface ReachRequest {
  /** More `127.0.0.1:PORT` it may reach (the template database a seed fills). */
  reach?: readonly string[];
  /** Loopback ports of the task's own that it may not reach through the bridge: a service's own port, on which it listens. */
  except?: readonly number[];
}

/**
 * Folders of the host where the sockets of the user's session live (an SSH agent, the D-Bus
 * session bus, a docker or podman socket): hidden, since connecting to a socket is not a write
 * that a read-only `/` refuses. `sandbox_sockets` binds one back by name.
 */
const SOCKET_DIRS = ['/run', '/var/run'];

export function sandboxProfileFor(ctx: ProjectContext, task: Task, request: ReachRequest = {}): SandboxProfile {
  const kind = sandboxKindFor(ctx, task);
  const network = kind === 'none' ? true : ctx.config.network === true;
  if (kind === 'none') return { kind, network, allow: null, ...NO_SANDBOX };
  // A task made `--sandbox bwrap` in a project without one takes warren.yaml's allowlist all the same.
  // The task's own services are reached by name (their loopback ports), through the same proxy
  // as an allow list: another task's services are on ports it does not forward.
  const except = new Set((request.except ?? []).map((p) => `127.0.0.1:${p}`));
  const own = network
    ? []
    : [...ctx.lifecycle.reach.flatMap((step) => step.addresses(ctx, task)), ...(request.reach ?? [])].filter(
        (a) => !except.has(a),
      );
  const configured = network ? null : egressAllowOf(ctx.config);
  const allow = own.length > 0 ? [...new Set([...(configured ?? []), ...own])] : configured;
  const home = process.env.HOME;
  // The main checkout too: its ignored files (a .env) are none of the task's business; git in the
  // workspace needs only its git directory, bound back below.
  const masked = [home, ctx.store.home, ctx.root, ctx.repo.root, ...socketDirs()].filter(
    (p): p is string => p !== undefined && path.isAbsolute(p) && p !== '/' && fs.existsSync(p),
  );
  const homeEntries =
    home && masked.includes(home) ? (ctx.user.sandbox_home ?? SANDBOX_HOME).map((rel) => path.join(home, rel)) : [];
  // A `share`d path is a link to the main checkout's copy: what it points at is bound back.
  const shared = (task.data.provision ?? []).filter((r) => modeKind(r.mode).sharesSource).map((r) => r.source);
  const sockets = ctx.user.sandbox_sockets ?? [];
  const readable = [ctx.repo.commonDir, ...shared, ...homeEntries, ...sockets].filter((p) => fs.existsSync(p));
  const { writable, pinned } = workspacePaths(ctx.repo.commonDir, task);
  return { kind, network, allow, masked, readable, writable, pinned };
}

/** /run, and /var/run where it is a folder of its own rather than a link to /run. */
function socketDirs(): string[] {
  return SOCKET_DIRS.filter((dir) => fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true);
}

/**
 * The workspace, and its private git directory (index, HEAD) so that `git status` works; the
 * shared object store and refs stay read-only: they belong to the main checkout. Pinned: the
 * workspace's `.git` file and its git directory's `gitdir`, `commondir` and `config.worktree`
 * (made empty first when absent, so that none can be made inside).
 */
function workspacePaths(commonDir: string, task: Task): { writable: string[]; pinned: string[] } {
  const dotGit = path.join(task.path, '.git');
  try {
    const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
    if (!m?.[1]) return { writable: [task.path], pinned: [] };
    const gitDir = fs.realpathSync(path.resolve(task.path, m[1].trim()));
    // Only a worktree folder of this repository is ever made writable (runInTask checked it all; this holds anyway).
    if (path.dirname(gitDir) !== path.join(fs.realpathSync(commonDir), 'worktrees')) {
      return { writable: [task.path], pinned: [dotGit] };
    }
    const perWorktree = path.join(gitDir, 'config.worktree');
    try {
      fs.writeFileSync(perWorktree, '', { flag: 'wx' }); // O_EXCL: never through a link the agent left there
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pinned = [dotGit, ...['gitdir', 'commondir', 'config.worktree'].map((f) => path.join(gitDir, f))];
    return { writable: [task.path, gitDir], pinned: pinned.filter((p) => fs.existsSync(p)) };
  } catch {
    // not a linked worktree layout; only the workspace is writable
    return { writable: [task.path], pinned: [] };
  }
}

/** Whether bwrap runs, per PATH it is found on. */
const bwrapRuns = new Map<string, boolean>();

/**
 * Refuses, before anything runs, a bwrap sandbox this machine cannot give: bwrap missing, or (as
 * root) one whose root would be root outside (sandbox-uid.ts). Never a quiet sandbox as uid 0:
 * the task asked for a sandbox, and root's files and sockets would be open to it.
 */
export async function assertSandboxAvailable(profile: SandboxProfile, home: string): Promise<void> {
  if (profile.kind === 'none') return;
  if (profile.kind === 'container') return assertPodman('this task');
  const where = process.env.PATH ?? '';
  let runs = bwrapRuns.get(where);
  if (runs === undefined) {
    runs =
      (await runBounded({ argv: ['bwrap', '--version'], stdout: 'ignore', stderr: 'ignore', timeoutMs: 5000 }))
        .exitCode === 0;
    bwrapRuns.set(where, runs);
  }
  if (!runs) {
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      'this task runs in a bwrap sandbox but bubblewrap (bwrap) is not installed or cannot run here; nothing was run.',
      {
        hint: 'Install it (apt-get install bubblewrap), or set `sandbox: none` for this project.',
      },
    );
  }
  if (!sandboxMapsRoot()) return;
  const problem = await sandboxUidProblem(home);
  if (problem !== null) {
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      `this task runs in a bwrap sandbox, and as root the sandbox's root must be another uid outside, which it cannot be here: ${problem}; nothing was run.`,
      { hint: sandboxUidHint() },
    );
  }
}

/**
 * As root, refuses a sandbox whose writable paths hold an overlay mounted for every process
 * (root's cow layers and checkouts, made before the task's sandbox was bwrap): the sandbox's
 * uid could not be given them. Checked once the run's `beforeRun` steps have mounted again what
 * a reboot took off.
 */
export function assertMappable(profile: SandboxProfile, taskId: string): void {
  if (profile.kind !== 'bwrap' || !sandboxMapsRoot()) return;
  const overlays = unmappableMounts(profile.writable, readMounts());
  if (overlays.length > 0) {
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      `this task runs in a bwrap sandbox, whose root is another uid outside when warren is root, and ${overlays.join(', ')} is a copy-on-write overlay mounted for every process, which cannot be mapped to that uid (overlayfs has no idmapped mounts); nothing was run.`,
      {
        hint: `Run \`warren provision ${taskId} --refresh\`: as root, a sandboxed task's copy-on-write layers are mounted in each command's own namespace instead. A copy-on-write checkout stays one: make the task again (a sandboxed task's checkout is then a plain one), or set \`sandbox: none\`.`,
      },
    );
  }
}

/**
 * The bridge that runs first inside a sandbox without a network of its own (bin/egress-bridge.mjs):
 * out through warren's egress proxy (an allow list), and in to a service's port (ingress).
 */
export interface BridgeSpec {
  /** warren's egress proxy: its socket on the host, bound into the sandbox at `insideSocket`; null: no way out. */
  egress: {
    socket: string;
    insideSocket: string;
    /** Loopback ports the bridge forwards as they are. */
    forwards: readonly { host: string; port: number }[];
  } | null;
  /**
   * A service's port, reached from the host: connections accepted outside (src/run/service-host.ts)
   * are handed in over the IPC channel the bridge inherits, and carried to this port inside.
   */
  ingressPort: number | null;
  /** node, and the bridge script, bound in by name. */
  node: string;
  bridge: string;
}

/**
 * bwrap: the root filesystem read-only, the workspace (with any mounts inside it, which
 * --bind carries recursively) writable, a private /tmp, its own PID namespace that dies with
 * warren, and no network unless allowed (--unshare-net leaves only a loopback of its own).
 * Every capability is dropped, the bounding set included, in a user namespace of its own and
 * with no_new_privs (bwrap's own): root inside can remount, mount, unmount, load a module or
 * open a raw device no more than a user can, and nothing it runs can gain a capability back.
 * (With an egress allowlist that forwards a loopback port below 1024, the one capability to
 * bind it in the sandbox's own network namespace is kept.)
 * With a bridge the network stays unshared, and the command runs under it: it carries the
 * command's connections to warren's proxy over the bound socket, and a service's inbound ones in.
 * With `staging` (warren is root), that root is not root outside: each bound path is bound from
 * the clone `staging` names for it, which maps its owner to the sandbox's uid (sandbox-uid.ts).
 */
export function sandboxArgv(
  profile: SandboxProfile,
  cwd: string,
  argv: readonly string[],
  bridge: BridgeSpec | null = null,
  staging: Staging | null = null,
): string[] {
  if (profile.kind === 'none') return [...argv];
  // As root, every bound path comes from its idmapped clone (sandbox-uid.ts); a path the agent can change is never followed.
  const from = (p: string, follow: boolean): string => staging?.source(p, follow) ?? p;
  const args = [
    'bwrap',
    '--die-with-parent',
    '--unshare-user',
    '--cap-drop',
    'ALL',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--new-session',
  ];
  const egress = bridge?.egress ?? null;
  // The bridge listens on the allowed loopback ports, as they are, in the sandbox's own network
  // namespace: a port below 1024 needs the one capability to bind it there, and nothing else.
  if (egress && egress.forwards.some((f) => f.port < 1024)) args.push('--cap-add', 'CAP_NET_BIND_SERVICE');
  if (!profile.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  // Masks first, then what is bound back over them; a path under /tmp is bound over the private /tmp too.
  for (const p of profile.masked) args.push('--tmpfs', p);
  for (const p of profile.readable) args.push('--ro-bind', from(p, true), p);
  for (const p of profile.writable) args.push('--bind', from(p, false), p);
  for (const p of profile.pinned) args.push('--ro-bind', from(p, false), p);
  // A mask is read-only once what goes inside it is bound: a write there fails as any write outside does.
  for (const p of profile.masked) args.push('--remount-ro', p);
  if (!bridge || (!egress && bridge.ingressPort === null)) {
    args.push('--chdir', cwd, '--', ...argv);
    return args;
  }
  // node and the bridge are bound in by name: under /tmp (a clone there) the private /tmp would hide them.
  args.push('--ro-bind', from(bridge.node, true), bridge.node, '--ro-bind', from(bridge.bridge, true), bridge.bridge);
  if (egress) args.push('--bind', from(egress.socket, false), egress.insideSocket);
  args.push('--chdir', cwd, '--', bridge.node, bridge.bridge, egress ? egress.insideSocket : '-');
  args.push(
    !egress || egress.forwards.length === 0 ? '-' : egress.forwards.map((f) => `${f.host}:${f.port}`).join(','),
    ...(bridge.ingressPort === null ? [] : ['--ingress', String(bridge.ingressPort)]),
    '--',
    ...argv,
  );
  return args;
}

/**
 * Why a sandboxed command failed, read from the end of its log: a refused write or a refused
 * connection. A heuristic (the command's own words), recorded as such.
 */
export function sandboxFailureReason(profile: SandboxProfile, logTail: string): string | null {
  if (profile.kind === 'none') return null;
  if (/Read-only file system|EROFS/i.test(logTail))
    return 'sandbox: a write outside the workspace was refused (read-only file system)';
  if (profile.allow && /403 Forbidden|not on this task's allow list/i.test(logTail))
    return 'sandbox: a connection to a host not on the allow list was refused';
  if (
    !profile.network &&
    /ECONNREFUSED|Connection refused|Couldn't connect to server|Network is unreachable|ENETUNREACH|EAI_AGAIN|Temporary failure in name resolution|Could not resolve/i.test(
      logTail,
    )
  ) {
    return 'sandbox: a network connection was refused (no network inside the sandbox; loopback only)';
  }
  return null;
}
