import type { LandResult } from '../land/land.js';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Store } from '../state/store.js';
import { isHolderAlive, procStartTime } from '../util/lockfile.js';

/**
 * The merge queue's rows (migration 004-queue): one per `land` asked for, in the order asked,
 * and one lease per repository naming the process that works the queue. Only this file reads
 * or writes those tables.
 */

export const QUEUE_STATES = ['queued', 'testing', 'landed', 'bounced', 'removed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export interface QueueOptions {
  message?: string;
  acceptHooks?: boolean;
}

/** What the processor planned for an entry while testing it: the squash it would land. */
export interface Planned {
  commit: string;
  tree: string;
  taskTip: string;
  forkPoint: string;
  /** The base tip the batch was integrated onto. */
  base: string;
  excluded: string[];
  rebased: boolean;
  /** Integrated speculatively on top of these tasks, which had not landed yet (land.speculate). */
  onTopOf?: string[];
}

export interface QueueEntry {
  id: number;
  project: string;
  taskId: string;
  state: QueueState;
  options: QueueOptions;
  enqueuedAt: string;
  updatedAt: string;
  reason: string | null;
  code: string | null;
  log: string | null;
  planned: Planned | null;
  /** When landed: what landed, as `land` reports it. */
  landed: LandedSummary | null;
  /** The integration workspace of the entry's latest gate run (its log is followed like a task's). */
  gateTask: string | null;
}

/** What an entry keeps of its land: `land`'s own result, less what the entry says itself. */
export type LandedSummary = Omit<LandResult, 'id' | 'landed' | 'push' | 'entry'>;

interface Row {
  id: number;
  project: string;
  task_id: string;
  state: string;
  options: string;
  enqueued_at: string;
  updated_at: string;
  reason: string | null;
  code: string | null;
  log: string | null;
  planned: string | null;
  result: string | null;
  gate_task: string | null;
}

function toEntry(r: Row): QueueEntry {
  return {
    id: r.id,
    project: r.project,
    taskId: r.task_id,
    state: r.state as QueueState,
    options: JSON.parse(r.options) as QueueOptions,
    enqueuedAt: r.enqueued_at,
    updatedAt: r.updated_at,
    reason: r.reason,
    code: r.code,
    log: r.log,
    planned: r.planned ? (JSON.parse(r.planned) as Planned) : null,
    landed: r.result ? (JSON.parse(r.result) as LandedSummary) : null,
    gateTask: r.gate_task,
  };
}

const ACTIVE = "state IN ('queued', 'testing')";

/**
 * Joins the queue: a new row at the end, unless the task already waits in it (then that row;
 * asking twice does not land twice).
 */
export function enqueue(
  store: Store,
  project: string,
  taskId: string,
  options: QueueOptions,
): { entry: QueueEntry; joined: boolean } {
  const join = store.db.transaction(() => {
    const existing = store.db
      .prepare(`SELECT * FROM queue WHERE project = ? AND task_id = ? AND ${ACTIVE} ORDER BY id LIMIT 1`)
      .get(project, taskId) as Row | undefined;
    if (existing) return { entry: toEntry(existing), joined: false };
    const now = new Date().toISOString();
    const id = Number(
      store.db
        .prepare(
          "INSERT INTO queue (project, task_id, state, options, enqueued_at, updated_at) VALUES (?, ?, 'queued', ?, ?, ?)",
        )
        .run(project, taskId, JSON.stringify(options), now, now).lastInsertRowid,
    );
    return { entry: getEntry(store, id) as QueueEntry, joined: true };
  });
  return join.immediate();
}

export function getEntry(store: Store, id: number): QueueEntry | null {
  const row = store.db.prepare('SELECT * FROM queue WHERE id = ?').get(id) as Row | undefined;
  return row ? toEntry(row) : null;
}

/** Entries still to land, oldest first. */
export function activeEntries(store: Store, project: string): QueueEntry[] {
  return (
    store.db.prepare(`SELECT * FROM queue WHERE project = ? AND ${ACTIVE} ORDER BY id`).all(project) as Row[]
  ).map(toEntry);
}

/** The newest entries of a project, every state (what `warren queue` lists), oldest first. */
export function recentEntries(store: Store, project: string, limit = 50): QueueEntry[] {
  return (
    store.db
      .prepare('SELECT * FROM (SELECT * FROM queue WHERE project = ? ORDER BY id DESC LIMIT ?) ORDER BY id')
      .all(project, limit) as Row[]
  ).map(toEntry);
}

export function setTesting(store: Store, id: number, planned: Planned | null): void {
  store.db
    .prepare(
      "UPDATE queue SET state = 'testing', planned = ?, updated_at = ? WHERE id = ? AND state IN ('queued', 'testing')",
    )
    .run(planned ? JSON.stringify(planned) : null, new Date().toISOString(), id);
}

/** The entries' integration is no longer speculative: what it was built on landed. */
export function clearOnTopOf(store: Store, ids: readonly number[]): void {
  for (const id of ids) {
    const planned = getEntry(store, id)?.planned;
    if (!planned?.onTopOf) continue;
    const { onTopOf: _onTopOf, ...rest } = planned;
    store.db.prepare("UPDATE queue SET planned = ? WHERE id = ? AND state = 'testing'").run(JSON.stringify(rest), id);
  }
}

export function setQueued(store: Store, id: number): void {
  store.db
    .prepare("UPDATE queue SET state = 'queued', planned = NULL, updated_at = ? WHERE id = ? AND state = 'testing'")
    .run(new Date().toISOString(), id);
}

export function setLanded(store: Store, id: number, landed: LandedSummary): void {
  store.db
    .prepare("UPDATE queue SET state = 'landed', result = ?, updated_at = ? WHERE id = ?")
    .run(JSON.stringify(landed), new Date().toISOString(), id);
}

export function setGateTask(store: Store, ids: readonly number[], gateTask: string): void {
  const set = store.db.prepare('UPDATE queue SET gate_task = ? WHERE id = ?');
  for (const id of ids) set.run(gateTask, id);
}

export function setBounced(store: Store, id: number, code: string, reason: string, log: string | null): void {
  store.db
    .prepare(
      "UPDATE queue SET state = 'bounced', code = ?, reason = ?, log = ?, updated_at = ? WHERE id = ? AND state IN ('queued', 'testing')",
    )
    .run(code, reason, log, new Date().toISOString(), id);
}

/** Leaves the queue (`warren queue rm`): only an entry not being tested right now. */
export function removeEntry(store: Store, id: number): boolean {
  return (
    store.db
      .prepare("UPDATE queue SET state = 'removed', updated_at = ? WHERE id = ? AND state = 'queued'")
      .run(new Date().toISOString(), id).changes === 1
  );
}

export interface Lease {
  project: string;
  token: string;
  heartbeat(): void;
  release(): void;
}

interface LeaseRow {
  project: string;
  pid: number;
  host: string;
  proc_start: string | null;
  token: string;
  since: string;
  heartbeat: string;
}

/** Who works the queue now, if anyone alive does. */
export function leaseHolder(store: Store, project: string): { pid: number; host: string; since: string } | null {
  const row = store.db.prepare('SELECT * FROM queue_lease WHERE project = ?').get(project) as LeaseRow | undefined;
  return row && holderAlive(row) ? { pid: row.pid, host: row.host, since: row.since } : null;
}

function holderAlive(row: LeaseRow): boolean {
  return isHolderAlive({
    pid: row.pid,
    host: row.host,
    procStart: row.proc_start,
    startedAt: row.since,
    purpose: 'queue',
    token: row.token,
  });
}

/**
 * Takes the repository's queue lease when nobody alive holds it (a dead holder's is taken over,
 * as a stale lock is). One processor per repository at a time.
 */
export function tryLease(store: Store, project: string): Lease | null {
  // Waiters ask every 150 ms: a live holder is seen without taking the database's write lock.
  if (leaseHolder(store, project)) return null;
  const token = randomUUID();
  const take = store.db.transaction((): boolean => {
    const row = store.db.prepare('SELECT * FROM queue_lease WHERE project = ?').get(project) as LeaseRow | undefined;
    if (row && holderAlive(row)) return false;
    const now = new Date().toISOString();
    store.db
      .prepare(
        'INSERT INTO queue_lease (project, pid, host, proc_start, token, since, heartbeat) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project) DO UPDATE SET pid = excluded.pid, host = excluded.host, proc_start = excluded.proc_start, token = excluded.token, since = excluded.since, heartbeat = excluded.heartbeat',
      )
      .run(project, process.pid, os.hostname(), procStartTime(process.pid), token, now, now);
    return true;
  });
  if (!take.immediate()) return null;
  return {
    project,
    token,
    heartbeat() {
      store.db
        .prepare('UPDATE queue_lease SET heartbeat = ? WHERE project = ? AND token = ?')
        .run(new Date().toISOString(), project, token);
    },
    release() {
      store.db.prepare('DELETE FROM queue_lease WHERE project = ? AND token = ?').run(project, token);
    },
  };
}
