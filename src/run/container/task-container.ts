import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import type { Task } from '../../state/types.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { isInside } from '../../util/paths.js';
import type { ProjectContext } from '../../workspace/context.js';
import { logDir } from '../records.js';
import { EGRESS_SOCKET_TAIL } from '../egress.js';
import type { SandboxProfile } from '../sandbox.js';
import { containerSettingsOf, type ContainerSettings } from './settings.js';
import { API, apiError, apiRequest, type ApiAnswer } from './api.js';
import {
  apiSocket,
  assertPodman,
  BASE_IMAGE,
  PODMAN_HINT,
  ensureApi,
  ensureBaseImage,
  imageExists,
  podman,
  podmanFailed,
} from './podman.js';
import { makeSocketDir, removeSocketDir, socketDir } from '../../system/socket-path.js';
import { removeTreeOrThrow } from '../../system/remove-tree.js';

/**
 * One long-lived container per task (devcontainers' pattern: made once, then an exec per
 * command). It is in the ledger — `$WARREN_HOME/containers/<id>/container.json` — before podman
 * makes it, so a crash between the two leaves a record that `rm` and `gc` find, never a
 * container nobody knows of; podman's labels say whose it is as well.
 */
export interface TaskContainer {
  name: string;
  /** podman's API socket. */
  socket: string;
  /** A folder bound read-only into the container at the same path: the runs' egress proxy sockets go here. */
  sockets: string;
}

interface Bind {
  source: string;
  mode: 'ro' | 'rw';
}

interface Ledger {
  name: string;
  project: string;
  task: string;
  binds: Bind[];
  settings: ContainerSettings;
  /** The common git directory mounted as an overlay (gitOverlayOf); absent in a record of a container made before. */
  gitOverlay?: string;
  /** The host's objects bound read-only at HOST_OBJECTS, the overlay's alternate (absent in an older record). */
  hostObjects?: boolean;
  createdAt: string;
}

const LABEL = 'warren.home';

/** What the container is called and where its record is, for a task of a project. */
export function containerPlace(home: string, project: string, taskId: string): { name: string; dir: string } {
  const id = createHash('sha256').update(`${home}\0${project}\0${taskId}`).digest('hex').slice(0, 16);
  return { name: `warren-${id}`, dir: path.join(home, 'containers', id) };
}

/**
 * The overlay over the repository's common git directory in a task's container: what git writes
 * there (the agent's commits, a hook it installs, config it sets) lands in `upper`, never in the
 * host repository; container-git.ts takes the commits from it after each run.
 */
export function gitOverlayOf(home: string, project: string, taskId: string): { upper: string; work: string } {
  const { dir } = containerPlace(home, project, taskId);
  return { upper: path.join(dir, 'git', 'upper'), work: path.join(dir, 'git', 'work') };
}

/** Where the container sees the repository's objects as they are on the host (read-only). */
const HOST_OBJECTS = '/run/warren/objects';

/**
 * The overlay's `objects/info/alternates`, written while no container has it mounted: the host's
 * objects at HOST_OBJECTS first, then the repository's own alternates. An overlay does not see
 * reliably what changes in its lower folder after it is mounted (a folder it looked up before
 * stays as it was), so a commit warren makes on the host (a checkpoint) would be missing inside;
 * through the plain bind it never is.
 */
function writeAlternates(upper: string, commonDir: string): void {
  // What the agent left in the upper folder is never followed: a link where a folder or the file
  // should be is taken away first (writing through it, as root, would write where it points).
  let dir = upper;
  for (const part of ['objects', 'info']) {
    dir = path.join(dir, part);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) fs.unlinkSync(dir);
    if (!st || !st.isDirectory()) fs.mkdirSync(dir);
  }
  let own = '';
  try {
    own = fs.readFileSync(path.join(commonDir, 'objects', 'info', 'alternates'), 'utf8');
  } catch {
    // none
  }
  const file = path.join(dir, 'alternates');
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st?.isDirectory()) removeTreeOrThrow(file, { inside: upper });
  else if (st) fs.unlinkSync(file);
  fs.writeFileSync(file, `${HOST_OBJECTS}\n${own}`, { flag: 'wx' });
}

/** Host folders every container reads (the toolchains under /usr; what /usr's links and TLS need in /etc). */
const SYSTEM = [
  '/usr',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/gitconfig',
];

/** What the task's container binds, from the task's boundary: readable read-only, writable read-write, pinned read-only over them. */
function bindsFor(
  ctx: ProjectContext,
  task: Task,
  profile: SandboxProfile,
  sockets: string,
  tools: readonly string[],
): Bind[] {
  const agents = path.join(logDir(ctx.store, ctx.key, task.id), 'agents');
  fs.mkdirSync(agents, { recursive: true, mode: 0o700 });
  const binds: Bind[] = [
    ...SYSTEM.filter((p) => fs.existsSync(p)).map((source) => ({ source, mode: 'ro' as const })),
    // warren's scripts and the command's installation, unless bound already (a workspace's own node_modules stays writable).
    ...tools
      .filter((p) => !['/usr', ...profile.readable, ...profile.writable].some((b) => isInside(b, p)))
      .map((source) => ({ source, mode: 'ro' as const })),
    ...profile.readable.map((source) => ({ source, mode: 'ro' as const })),
    ...profile.writable.map((source) => ({ source, mode: 'rw' as const })),
    { source: agents, mode: 'rw' },
    ...profile.pinned.map((source) => ({ source, mode: 'ro' as const })),
    { source: sockets, mode: 'ro' },
  ];
  const seen = new Set<string>();
  return binds.filter((b) => (seen.has(`${b.source}\0${b.mode}`) ? false : (seen.add(`${b.source}\0${b.mode}`), true)));
}

/** True when every bind asked for is there, exactly as asked (a pinned file read-only over a writable folder stays so). */
function covers(have: readonly Bind[], want: readonly Bind[]): boolean {
  return want.every((w) => have.some((h) => h.source === w.source && h.mode === w.mode));
}

/**
 * The task's container, running, with what this run needs bound: made when missing (recorded
 * first), started when stopped (a reboot), made again when the run needs a path it lacks.
 */
export async function ensureTaskContainer(
  ctx: ProjectContext,
  task: Task,
  profile: SandboxProfile,
  tools: readonly string[],
): Promise<TaskContainer> {
  const { name } = containerPlace(ctx.store.home, ctx.key, task.id);
  // One at a time per container in this process: `new` makes it ahead while its setup may ask for it.
  return afterMaking(name, () => makeTaskContainer(ctx, task, profile, tools));
}

/** What is being made or removed now, by container name: the next asks wait for it. */
const inFlight = new Map<string, Promise<unknown>>();

function afterMaking<T>(name: string, work: () => Promise<T>): Promise<T> {
  const before = inFlight.get(name) ?? Promise.resolve();
  const next = before.catch(() => undefined).then(work);
  inFlight.set(name, next);
  const forget = () => {
    if (inFlight.get(name) === next) inFlight.delete(name);
  };
  next.then(forget, forget);
  return next;
}

async function makeTaskContainer(
  ctx: ProjectContext,
  task: Task,
  profile: SandboxProfile,
  tools: readonly string[],
): Promise<TaskContainer> {
  await assertPodman(`task ${task.id}`);
  const settings = containerSettingsOf(ctx.config);
  const { name, dir } = containerPlace(ctx.store.home, ctx.key, task.id);
  const sockets = socketDir(path.join(dir, 'sockets'), EGRESS_SOCKET_TAIL);
  makeSocketDir(sockets);
  const commonDir = ctx.repo.commonDir;
  // The common git directory is the overlay's, not a read-only bind (its worktree's own folder stays bound as in bwrap).
  const want = bindsFor(ctx, task, profile, sockets, tools).filter((b) => b.source !== commonDir);
  const overlay = gitOverlayOf(ctx.store.home, ctx.key, task.id);
  for (const d of [overlay.upper, overlay.work]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  const ledger = readLedger(dir);
  const socket = apiSocket(ctx.store.home);
  // The first question to podman's service says it is up, too (no ping first: a round trip less
  // on every command and in `new`); no answer, and it is started, and asked again.
  const ask = <T>(question: () => Promise<T>): Promise<T> =>
    question().catch(async (err: unknown) => {
      if (err instanceof WarrenError) throw err; // an answer, not a service that did not answer
      await ensureApi(ctx.store.home);
      return question();
    });
  const state = ledger ? await ask(() => containerState(socket, name)) : 'missing';
  if (
    ledger &&
    state !== 'missing' &&
    covers(ledger.binds, want) &&
    sameSettings(ledger.settings, settings) &&
    ledger.gitOverlay === commonDir &&
    ledger.hostObjects === true
  ) {
    if (state !== 'running') {
      const started = await podman(['start', name]);
      if (started.exitCode !== 0) throw podmanFailed(`starting task ${task.id}'s container ${name}`, started);
    }
    return { name, socket, sockets };
  }
  if (state !== 'missing') await podman(['rm', '-f', '-t', '0', name]);
  const named = settings.image;
  const image = named ?? (await ask(() => ensureBaseImage(socket)));
  if (named && !(await ask(() => imageExists(socket, named)))) {
    throw new WarrenError(
      'SANDBOX_UNAVAILABLE',
      `warren.yaml's sandbox image ${settings.image} is not on this machine; nothing was run.`,
      {
        hint: `Build or load it (podman build, podman load), or leave \`image:\` out for warren's own (${BASE_IMAGE}).`,
      },
    );
  }
  const binds = (ledger && state !== 'missing' ? union(ledger.binds, want) : want).filter(
    (b) => b.source !== commonDir,
  );
  writeFileAtomic(
    path.join(dir, 'container.json'),
    `${JSON.stringify({ name, project: ctx.key, task: task.id, binds, settings, gitOverlay: commonDir, hostObjects: true, createdAt: new Date().toISOString() } satisfies Ledger)}\n`,
  );
  writeAlternates(overlay.upper, commonDir);
  const warnings = await createContainer(
    socket,
    createSpec(ctx.store.home, ctx.key, task.id, name, image, binds, settings, profile.network, {
      ...overlay,
      dir: commonDir,
    }),
    `task ${task.id}'s container ${name}`,
  );
  for (const warning of warnings) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'sandbox.container_warning',
      message: `podman, making task ${task.id}'s container ${name}: ${warning}`,
      data: { name, warning },
    });
  }
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'sandbox.container_made',
    message: `task ${task.id} runs in container ${name} (${image}; ${binds.length} bound path(s); memory ${settings.memory}, cpus ${settings.cpus}, pids ${settings.pids})`,
    data: { name, image, binds: binds.length },
  });
  return { name, socket, sockets };
}

/** What was bound before (a hook folder of an earlier run) and what this run needs; this run's mode wins for a path in both. */
function union(before: readonly Bind[], now: readonly Bind[]): Bind[] {
  const wanted = new Set(now.map((b) => b.source));
  return [...before.filter((b) => !wanted.has(b.source)), ...now];
}

function sameSettings(a: ContainerSettings, b: ContainerSettings): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** podman's `--memory` size (`4g`, `512m`, `1048576`) in bytes. */
function bytesOf(size: string): number {
  const m = /^(\d+)([bkmg]?)$/i.exec(size);
  if (!m) throw new WarrenError('CONFIG_INVALID', `sandbox memory ${size} is not a size (e.g. 4g or 512m).`);
  const unit = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'b' | 'k' | 'm' | 'g'];
  return Number(m[1]) * unit;
}

/**
 * The container's specification for podman's API (libpod's SpecGenerator; the same as `podman
 * run -d` with these flags, made in one request instead of a podman process — about 0.25 s
 * less): no capability, no new privileges, a read-only root with a private /tmp, its own
 * loopback only (`--network none`; the egress bridge carries what the allow list permits),
 * limits from warren.yaml. Its first process ignores SIGCHLD, so what the runs leave to it is
 * reaped.
 */
function createSpec(
  home: string,
  project: string,
  taskId: string,
  name: string,
  image: string,
  binds: readonly Bind[],
  settings: ContainerSettings,
  network: boolean,
  git: { dir: string; upper: string; work: string },
): Record<string, unknown> {
  const period = 100_000;
  return {
    name,
    image,
    command: ['perl', '-e', '$SIG{CHLD} = "IGNORE"; sleep'],
    labels: { [LABEL]: home, 'warren.project': project, 'warren.task': taskId },
    ...(network ? {} : { netns: { nsmode: 'none' } }),
    cap_drop: ['all'],
    no_new_privileges: true,
    read_only_filesystem: true,
    hostname: 'warren',
    mounts: [
      { destination: '/tmp', source: 'tmpfs', type: 'tmpfs', options: ['rw', 'mode=1777'] },
      ...binds.map((b) => ({ destination: b.source, source: b.source, type: 'bind', options: [b.mode, 'rbind'] })),
      // The host's objects, plainly: what warren commits there after the container started is
      // found through the overlay's alternate, never hidden by the overlay's cached view.
      { destination: HOST_OBJECTS, source: path.join(git.dir, 'objects'), type: 'bind', options: ['ro', 'rbind'] },
    ],
    overlay_volumes: [
      { destination: git.dir, source: git.dir, options: [`upperdir=${git.upper}`, `workdir=${git.work}`] },
    ],
    resource_limits: {
      memory: { limit: bytesOf(settings.memory) },
      cpu: { quota: Math.round(settings.cpus * period), period },
      pids: { limit: settings.pids },
    },
  };
}

/** Makes and starts the container through podman's API; what podman warned of, in words. */
async function createContainer(socket: string, spec: Record<string, unknown>, what: string): Promise<string[]> {
  const made = await apiRequest(socket, 'POST', `${API}/containers/create`, spec);
  if (made.status !== 201) throw apiFailed(`making ${what}`, made);
  const started = await apiRequest(socket, 'POST', `${API}/containers/${encodeURIComponent(String(spec.name))}/start`);
  if (started.status !== 204 && started.status !== 304) throw apiFailed(`starting ${what}`, started);
  const warnings = (made.body as { Warnings?: unknown } | null)?.Warnings;
  return Array.isArray(warnings) ? warnings.map(String) : [];
}

function apiFailed(what: string, answer: ApiAnswer): WarrenError {
  return new WarrenError('SANDBOX_UNAVAILABLE', `${what}: podman said: ${apiError(answer)}; nothing was run.`, {
    hint: PODMAN_HINT,
  });
}

/** The container's state, through podman's API (a podman process would cost ~70 ms a command). */
async function containerState(socket: string, name: string): Promise<'running' | 'stopped' | 'missing'> {
  const r = await apiRequest(socket, 'GET', `${API}/containers/${encodeURIComponent(name)}/json`);
  if (r.status === 404) return 'missing';
  if (r.status !== 200) return 'stopped';
  return (r.body as { State?: { Running?: unknown } } | null)?.State?.Running === true ? 'running' : 'stopped';
}

function readLedger(dir: string): Ledger | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'container.json'), 'utf8')) as Ledger;
  } catch {
    return null;
  }
}

/** Removes a task's container and its record; a problem in words, or null. */
export async function removeTaskContainer(home: string, project: string, taskId: string): Promise<string | null> {
  return afterMaking(containerPlace(home, project, taskId).name, () => removeIt(home, project, taskId));
}

async function removeIt(home: string, project: string, taskId: string): Promise<string | null> {
  const { name, dir } = containerPlace(home, project, taskId);
  if (!fs.existsSync(dir)) return null;
  const r = await podman(['rm', '-f', '-t', '0', '--ignore', name]);
  if (r.exitCode !== 0) return `container ${name} could not be removed: ${r.stderr.toString().trim()}`;
  removeTreeOrThrow(dir, { inside: home });
  removeSocketDir(path.join(dir, 'sockets'), EGRESS_SOCKET_TAIL);
  return null;
}

/** The ledger's records: which containers warren made for which task (gc's list). */
export function recordedContainers(home: string): { id: string; project: string; task: string; name: string }[] {
  const root = path.join(home, 'containers');
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root).flatMap((id) => {
    const l = readLedger(path.join(root, id));
    return l ? [{ id, project: l.project, task: l.task, name: l.name }] : [];
  });
}
