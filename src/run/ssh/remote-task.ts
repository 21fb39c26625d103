import { createHash } from 'node:crypto';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../../errors.js';
import { isAncestor } from '../../git/history.js';
import { revParse } from '../../git/refs.js';
import { dropRef, fastForwardWorkspace, fetchInto, pathsBetween, pushCommits } from '../../git/ssh-transfer.js';
import { compilePolicy } from '../../config/protected.js';
import type { Task } from '../../state/types.js';
import { faultPoint } from '../../system/fault.js';
import { acquireWaiting, type HeldLock } from '../../util/lockfile.js';
import type { ProjectContext } from '../../workspace/context.js';
import { pinned } from '../../workspace/pinned.js';
import { trustState } from '../../trust/trust.js';
import { connect, gitSshCommand, gitUrl, openRequest, request, type OpenRequest } from './connection.js';
import { hostNamed, remoteHostName, type Host } from './hosts.js';
import type { Committed, Created, Prepared, ProjectName, Report } from './protocol.js';
import { readPrepared, readRecord, writePrepared, writeRecord, type RemoteRecord } from './remote-records.js';

/** The task's ref here where fetched commits wait until they are checked. */
export const quarantineRef = (id: string): string => `refs/warren/quarantine/${id}`;
/** On the host: what the coordinator sent (the task's base at `new`). */
const sentRef = (id: string): string => `refs/warren/sent/${id}`;

/** The coordinator's repository's name on the host: its folder's name and a hash of its key. */
export function remoteProject(ctx: Pick<ProjectContext, 'key' | 'repo'>): ProjectName {
  const base = path
    .basename(ctx.repo.root)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 40);
  return `${base || 'repo'}-${createHash('sha256').update(ctx.key).digest('hex').slice(0, 12)}`;
}

/**
 * `new` on a host: the record first (so rm and gc know the host may hold something), the host's
 * repository made, the base commit there, then the host's warren makes the task's workspace from
 * it — through its own `new` (its checkout, provisioning, its sandbox's checks). The host's
 * warren may have been started already (`opened`: sshCreate's prepare, while the worktree here
 * was made). The base is pushed only when the host lacks it (it says so: BASE_UNKNOWN, nothing
 * made), so a task from a base sent before costs one round trip.
 */
export async function createRemote(
  ctx: ProjectContext,
  task: Task,
  host: Host,
  opened: OpenRequest | null = null,
): Promise<Created> {
  const home = ctx.store.home;
  const project = remoteProject(ctx);
  const record: RemoteRecord = {
    host: host.name,
    project,
    repo: null,
    sent: task.baseCommit,
    pending: false,
    created: false,
  };
  writeRecord(home, ctx.key, task.id, record);
  let first: OpenRequest | null = opened;
  const next = async (): Promise<OpenRequest> => {
    const it = first ?? (await openRequest(home, host, `task ${task.id}`));
    first = null;
    return it;
  };
  const trust = trustState(ctx);
  const createIt = async (): Promise<Created> =>
    (await next()).send<Created>({
      op: 'create',
      v: 1,
      project,
      type: task.type,
      id: task.id,
      base: task.baseCommit,
      ...(task.data.sandbox ? { sandbox: task.data.sandbox } : {}),
      ...(trust.trusted ? { trusted: trust.hash } : {}),
    });
  const push = (repo: string) =>
    pushCommits(ctx.repo, gitUrl(host, repo), gitSshCommand(home, host), [
      { commit: task.baseCommit, ref: sentRef(task.id) },
    ]);
  // The host's repository, asked for once per host (kept beside the records); asked again if a push to it fails.
  const known = readPrepared(home, ctx.key, host.name);
  let created: Created | null = null;
  try {
    if (known !== null) {
      record.repo = known;
      writeRecord(home, ctx.key, task.id, record);
      try {
        created = await createIt();
      } catch (err) {
        if (!isWarrenError(err, 'BASE_UNKNOWN')) throw err;
        // The host lacks the base (or its repository went): sent, then asked again.
        const pushed = await push(known).then(
          () => true,
          () => false,
        );
        if (pushed) created = await createIt();
      }
    }
    if (created === null) {
      const repo = (await (await next()).send<Prepared>({ op: 'prepare', v: 1, project })).repo;
      writePrepared(home, ctx.key, host.name, repo);
      record.repo = repo;
      writeRecord(home, ctx.key, task.id, record);
      await push(repo);
      created = await createIt();
    }
  } finally {
    first?.close();
  }
  record.created = true;
  record.path = created.path;
  record.ports = created.ports ?? null;
  writeRecord(home, ctx.key, task.id, record);
  const ports = created.ports
    ? `ports ${created.ports.first}-${created.ports.first + created.ports.count - 1}`
    : 'ports';
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'remote.created',
    // What the host's `new` made there is not made here (src/config/runner.ts's madeOnHost): said once.
    message: `task ${task.id} runs on host ${host.name}, in ${created.path}; its ${ports}, provisioned paths and services are the host's, made there (none here)`,
    data: { host: host.name, path: created.path, base: task.baseCommit, ports: created.ports ?? null },
  });
  return created;
}

/** The record says the host may hold commits not fetched back. */
export function pendingOnHost(ctx: ProjectContext, task: Task): boolean {
  return readRecord(ctx.store.home, ctx.key, task.id)?.pending === true;
}

/** Before a change on the host (a run, a commit there): the record says commits may wait there. */
export function markPending(ctx: ProjectContext, task: Task): RemoteRecord {
  const record = readRecord(ctx.store.home, ctx.key, task.id);
  if (!record) throw missingRecord(task);
  if (!record.pending) writeRecord(ctx.store.home, ctx.key, task.id, { ...record, pending: true });
  return { ...record, pending: true };
}

export function missingRecord(task: Task): WarrenError {
  return new WarrenError(
    'REMOTE_FAILED',
    `task ${task.id} runs on another machine, but warren has no record of where its workspace is there; nothing was run.`,
    { hint: `Remove it (\`warren rm ${task.id}\`) and make it again.` },
  );
}

/**
 * The host's commits of the task brought back: fetched into the quarantine ref (no hook, no
 * checkout, no configuration of the host's), checked — a descendant of what the branch had
 * (`sent`), touching no protected path — and only then the task's branch and its workspace here
 * moved to them. Refused: REMOTE_COMMITS_REFUSED, the quarantine ref kept, the branch as it was.
 */
export async function syncBack(ctx: ProjectContext, task: Task): Promise<{ from: string; to: string } | null> {
  const turn = await fetchTurn(ctx, task.id, 'fetching its commits from its host');
  try {
    return await syncBackInTurn(ctx, task);
  } finally {
    turn.release();
  }
}

/**
 * One fetch from a task's host at a time, whichever command asks (a run's, the dashboard's diff,
 * `status`): fetches go into refs of the task's own here (its quarantine, the workspace read
 * there), and two at once would race on them. Waited for, not refused: a read of a task whose
 * run is going (it holds the task's lock) still gets its turn.
 */
export async function fetchTurn(ctx: ProjectContext, id: string, purpose: string): Promise<HeldLock> {
  const file = path.join(ctx.store.home, 'locks', ctx.key, `${id}.fetch.lock`);
  const got = await acquireWaiting(file, purpose, FETCH_WAIT_MS);
  if (!got.ok)
    throw new WarrenError(
      'LOCK_TIMEOUT',
      `task ${id}'s fetch from its host was held for over ${FETCH_WAIT_MS / 1000}s (pid ${got.holder?.pid ?? '?'}: ${got.holder?.purpose ?? 'another warren'}); nothing was changed.`,
      { hint: 'Run the command again once that one has ended.' },
    );
  return got.lock;
}

const FETCH_WAIT_MS = 120_000;

async function syncBackInTurn(ctx: ProjectContext, task: Task): Promise<{ from: string; to: string } | null> {
  const home = ctx.store.home;
  const record = readRecord(home, ctx.key, task.id);
  if (!record?.repo || !record.created) return null;
  const host = hostNamed(ctx, record.host);
  await connect(home, host, `task ${task.id}`);
  faultPoint('ssh', 'fetching');
  const tip = await fetchInto(
    ctx.repo,
    gitUrl(host, record.repo),
    gitSshCommand(home, host),
    `refs/heads/${task.branch}`,
    quarantineRef(task.id),
  ).catch((err: unknown) => {
    // A lost connection mid-fetch: git moved no ref, so the branch here and the commits there are as they were.
    throw new WarrenError(
      'REMOTE_FAILED',
      `could not fetch task ${task.id}'s commits from host ${host.name} (${lastLine(err)}); the task's branch here is as it was, and its commits stay on the host.`,
      { hint: `Once the host answers again, run the command again: it fetches them (\`warren status ${task.id}\`).` },
    );
  });
  if (tip === null) {
    throw new WarrenError(
      'REMOTE_FAILED',
      `host ${host.name} has no branch ${task.branch} for task ${task.id} any more; the task's branch here is as it was.`,
      { hint: `\`warren rm ${task.id}\` removes the task here; its branch here keeps what was fetched before.` },
    );
  }
  const local = (await revParse(ctx.repo, `refs/heads/${task.branch}`)) ?? record.sent;
  if (tip === local) {
    await dropRef(ctx.repo.root, quarantineRef(task.id));
    if (record.pending) writeRecord(home, ctx.key, task.id, { ...record, sent: tip, pending: false });
    return null;
  }
  await checkFetched(ctx, task, host, local, tip);
  await fastForwardWorkspace(await pinned(ctx, task.path), tip);
  await dropRef(ctx.repo.root, quarantineRef(task.id));
  writeRecord(home, ctx.key, task.id, { ...record, sent: tip, pending: false });
  ctx.store.addEvent({
    project: ctx.key,
    taskId: task.id,
    kind: 'remote.fetched',
    message: `fetched task ${task.id}'s commits from host ${host.name}: ${local.slice(0, 12)}..${tip.slice(0, 12)}`,
    data: { host: host.name, from: local, to: tip },
  });
  return { from: local, to: tip };
}

/** What ssh (else git) said of a failed fetch, in one line. */
export function lastLine(err: unknown): string {
  const details = err instanceof WarrenError ? err.details : undefined;
  const said = typeof details?.stderr === 'string' ? details.stderr : err instanceof Error ? err.message : String(err);
  const lines = said
    .split('\n')
    .map((l) => l.replace(/\r$/, '').trim())
    .filter((l) => l !== '');
  return lines.find((l) => l.startsWith('ssh:')) ?? lines.at(-1) ?? 'no output';
}

/** The guard on fetched commits: what the task's branch had must be an ancestor, and no protected path touched. */
async function checkFetched(ctx: ProjectContext, task: Task, host: Host, sent: string, tip: string): Promise<void> {
  const refuse = (reason: string, paths: string[]): never => {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'remote.refused',
      level: 'error',
      message: `commits fetched from host ${host.name} for task ${task.id} refused: ${reason}`,
      data: { host: host.name, tip, sent, reason, paths },
    });
    throw new WarrenError(
      'REMOTE_COMMITS_REFUSED',
      `the commits fetched from host ${host.name} for task ${task.id} were refused: ${reason}. They are kept under ${quarantineRef(task.id)}; the task's branch is as it was (${sent.slice(0, 12)}).`,
      {
        hint: `Look at them (\`git log ${sent.slice(0, 12)}..${quarantineRef(task.id)}\`), put the task right on its host, then run the command again — or \`warren rm ${task.id} --discard\`.`,
        details: { tip, sent, paths },
      },
    );
  };
  if (!(await isAncestor(ctx.repo, sent, tip)))
    refuse(`${tip.slice(0, 12)} does not descend from ${sent.slice(0, 12)}, what the branch had`, []);
  const policy = compilePolicy(ctx.config.protected, 'warren.yaml');
  const touched = (await pathsBetween(ctx.repo, sent, tip)).filter((p) => policy.matches(p));
  if (touched.length > 0) refuse(`they touch protected path(s) ${touched.join(', ')}`, touched);
}

/** Where the task stands on its host. */
export async function reportRemote(ctx: ProjectContext, task: Task): Promise<Report> {
  const record = readRecord(ctx.store.home, ctx.key, task.id);
  if (!record) throw missingRecord(task);
  return request<Report>(ctx.store.home, hostNamed(ctx, record.host), {
    op: 'report',
    v: 1,
    project: record.project,
    id: task.id,
  });
}

/** The host's uncommitted work committed there (its own checkpoint), then fetched back and checked. */
export async function commitRemote(
  ctx: ProjectContext,
  task: Task,
  options: { message?: string; noVerify?: boolean },
): Promise<Committed> {
  const record = markPending(ctx, task);
  const committed = await request<Committed>(ctx.store.home, hostNamed(ctx, record.host), {
    op: 'commit',
    v: 1,
    project: record.project,
    id: task.id,
    ...(options.message === undefined ? {} : { message: options.message }),
    ...(options.noVerify ? { noVerify: true } : {}),
  });
  await syncBack(ctx, task);
  return committed;
}

/** `bringBack` of task `id` when it runs on another machine; nothing for a task here (or no such task: the command says so). */
export async function bringBackTask(ctx: ProjectContext, id: string): Promise<void> {
  const task = ctx.store.getTask(ctx.key, id);
  if (task && remoteHostName(task) !== null) await bringBack(ctx, task, null);
}

/**
 * Before a command that reads the task's branch here (land, status, diff): what the host
 * committed, fetched and checked; with `clean`, refused while the host has uncommitted work.
 */
export async function bringBack(ctx: ProjectContext, task: Task, clean: string | null): Promise<void> {
  const record = readRecord(ctx.store.home, ctx.key, task.id);
  if (!record) return;
  try {
    await syncBack(ctx, task);
  } catch (err) {
    // What the command that asked would have done is said too (land: "nothing was landed").
    if (clean === null || !isWarrenError(err, 'REMOTE_FAILED')) throw err;
    throw new WarrenError('REMOTE_FAILED', `${err.message} ${clean}`, {
      ...(err.hint === undefined ? {} : { hint: err.hint }),
      cause: err,
    });
  }
  if (clean === null) return;
  const report = await reportRemote(ctx, task);
  if (report.dirty) {
    throw new WarrenError(
      'WORKSPACE_DIRTY',
      `task ${task.id}'s workspace on host ${record.host} has uncommitted changes; ${clean}`,
      { hint: `\`warren checkpoint ${task.id}\` commits them there and brings them here.` },
    );
  }
}
