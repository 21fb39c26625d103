import { WarrenError } from '../errors.js';
import type { Db, OpenOptions } from './db.js';
import { openDb } from './db.js';
import { readFacts, type FactReader, type FactReaders, type TaskFacts } from './facts.js';
import { canMove } from './transitions.js';
import type { NewEvent, Task, TaskState, WarrenEvent } from './types.js';

interface TaskRow {
  project: string;
  id: string;
  type: string;
  branch: string;
  path: string;
  base: string;
  base_commit: string;
  state: string;
  created_at: string;
  updated_at: string;
  data: string;
}

interface EventRow {
  seq: number;
  at: string;
  project: string | null;
  task_id: string | null;
  kind: string;
  level: string;
  message: string;
  data: string;
}

function toTask(row: TaskRow, facts: Readonly<Record<string, FactReader<unknown>>>): Task {
  return {
    project: row.project,
    id: row.id,
    type: row.type as Task['type'],
    branch: row.branch,
    path: row.path,
    base: row.base,
    baseCommit: row.base_commit,
    state: row.state as TaskState,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    data: readFacts(row.data, facts),
  };
}

function toEvent(row: EventRow): WarrenEvent {
  // Written through addEvent, which takes only known kinds with their payloads.
  return {
    seq: row.seq,
    at: row.at,
    project: row.project,
    taskId: row.task_id,
    kind: row.kind,
    level: row.level,
    message: row.message,
    data: JSON.parse(row.data) as unknown,
  } as WarrenEvent;
}

/**
 * The one store: every read and write of warren's state goes through here. `facts` reads each
 * key of a task's facts (src/composition.ts's `openStore` gives warren's own readers): a key
 * without a reader is kept in the row but left out of the typed view.
 */
export class Store {
  readonly db: Db;
  readonly home: string;
  private readonly facts: Readonly<Record<string, FactReader<unknown>>>;

  constructor(home: string, facts: FactReaders, options: OpenOptions = {}) {
    this.home = home;
    this.facts = facts;
    this.db = openDb(home, undefined, options);
  }

  close(): void {
    this.db.close();
  }

  upsertProject(key: string, root: string, commonDir: string): void {
    this.db
      .prepare(
        `INSERT INTO projects (key, root, common_dir, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET root = excluded.root, common_dir = excluded.common_dir`,
      )
      .run(key, root, commonDir, new Date().toISOString());
  }

  listProjects(): { key: string; root: string; commonDir: string }[] {
    return (
      this.db.prepare('SELECT key, root, common_dir FROM projects ORDER BY key').all() as {
        key: string;
        root: string;
        common_dir: string;
      }[]
    ).map((row) => ({ key: row.key, root: row.root, commonDir: row.common_dir }));
  }

  insertTask(task: Omit<Task, 'createdAt' | 'updatedAt'>): Task {
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO tasks (project, id, type, branch, path, base, base_commit, state, created_at, updated_at, data)
         VALUES (@project, @id, @type, @branch, @path, @base, @baseCommit, @state, @now, @now, @data)`,
      )
      .run({ ...task, now, data: JSON.stringify(task.data) });
    return { ...task, createdAt: now, updatedAt: now };
  }

  getTask(project: string, id: string): Task | null {
    const row = this.db.prepare('SELECT * FROM tasks WHERE project = ? AND id = ?').get(project, id) as
      TaskRow | undefined;
    return row ? toTask(row, this.facts) : null;
  }

  listTasks(project?: string): Task[] {
    const rows = (
      project === undefined
        ? this.db.prepare('SELECT * FROM tasks ORDER BY project, created_at, id').all()
        : this.db.prepare('SELECT * FROM tasks WHERE project = ? ORDER BY created_at, id').all(project)
    ) as TaskRow[];
    return rows.map((row) => toTask(row, this.facts));
  }

  /**
   * Moves a task from one of `from` to `to`, atomically (compare-and-set on the row's state).
   * A move the state machine does not allow is a bug in warren; a row that is no longer in
   * `from` (another command moved it) is refused with TASK_STATE and nothing changes.
   */
  transition(project: string, id: string, from: TaskState | readonly TaskState[], to: TaskState): void {
    const sources = typeof from === 'string' ? [from] : from;
    for (const s of sources)
      if (!canMove(s, to)) throw new Error(`task state machine: ${s} → ${to} is not a move a task makes`);
    const changed = this.db
      .prepare(
        `UPDATE tasks SET state = ?, updated_at = ? WHERE project = ? AND id = ? AND state IN (${sources.map(() => '?').join(', ')})`,
      )
      .run(to, new Date().toISOString(), project, id, ...sources).changes;
    if (changed === 1) return;
    const now = this.getTask(project, id);
    throw new WarrenError(
      'TASK_STATE',
      now
        ? `task ${id} is ${now.state}, not ${sources.join(' or ')}; nothing was changed.`
        : `task ${id} no longer exists; nothing was changed.`,
      {
        hint: `See \`warren show ${id}\`: another command may have changed it meanwhile.`,
      },
    );
  }

  /** Shallow-merges `patch` into the task's facts. */
  mergeData(project: string, id: string, patch: TaskFacts): void {
    const merge = this.db.transaction(() => {
      const row = this.db.prepare('SELECT data FROM tasks WHERE project = ? AND id = ?').get(project, id) as
        { data: string } | undefined;
      if (!row) return;
      const data = { ...(JSON.parse(row.data) as Record<string, unknown>), ...patch };
      this.db
        .prepare('UPDATE tasks SET data = ?, updated_at = ? WHERE project = ? AND id = ?')
        .run(JSON.stringify(data), new Date().toISOString(), project, id);
    });
    merge.immediate();
  }

  deleteTask(project: string, id: string): void {
    this.db.prepare('DELETE FROM tasks WHERE project = ? AND id = ?').run(project, id);
  }

  addEvent(event: NewEvent): WarrenEvent {
    const at = new Date().toISOString();
    const level = event.level ?? 'info';
    const data = event.data ?? {};
    const result = this.db
      .prepare('INSERT INTO events (at, project, task_id, kind, level, message, data) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(at, event.project, event.taskId ?? null, event.kind, level, event.message, JSON.stringify(data));
    return {
      seq: Number(result.lastInsertRowid),
      at,
      project: event.project,
      taskId: event.taskId ?? null,
      kind: event.kind,
      level,
      message: event.message,
      data,
    } as WarrenEvent;
  }

  /**
   * The task's events, oldest first, at most `limit` of the newest. An ID can be used again after
   * `rm`: only the events after the previous task of that ID ended (its `task.removed`, or a
   * `new` that failed and undid itself) are this task's — including what its own `new` recorded
   * before the task existed, such as the base's fast-forward, but not the refusals that said
   * there was no such task.
   */
  taskEvents(project: string, taskId: string, limit = 50): WarrenEvent[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM (
           SELECT * FROM events WHERE project = @project AND task_id = @taskId
             AND seq > COALESCE((SELECT MAX(seq) FROM events WHERE project = @project AND task_id = @taskId AND kind IN ('task.removed', 'task.create_failed')), 0)
             AND NOT (kind = 'refused' AND json_extract(data, '$.code') = 'TASK_NOT_FOUND')
           ORDER BY seq DESC LIMIT @limit
         ) ORDER BY seq`,
      )
      .all({ project, taskId, limit }) as EventRow[];
    return rows.map(toEvent);
  }

  /** Events after `seq` (all projects), oldest first: how another process's changes are noticed. */
  eventsSince(seq: number, limit = 500): WarrenEvent[] {
    const rows = this.db
      .prepare('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?')
      .all(seq, limit) as EventRow[];
    return rows.map(toEvent);
  }

  /** A project's events of one kind, whatever task they are of, oldest first: at most `limit` of the newest. */
  projectEvents(project: string, kind: string, limit = 100): WarrenEvent[] {
    const rows = this.db
      .prepare(
        'SELECT * FROM (SELECT * FROM events WHERE project = ? AND kind = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq',
      )
      .all(project, kind, limit) as EventRow[];
    return rows.map(toEvent);
  }

  lastEventSeq(): number {
    const row = this.db.prepare('SELECT MAX(seq) AS seq FROM events').get() as { seq: number | null };
    return row.seq ?? 0;
  }

  /** The command set this user trusted for a project (trust on first use), or null. */
  getTrust(project: string): TrustRecord | null {
    const row = this.db.prepare('SELECT hash, commands, trusted_at FROM trust WHERE project = ?').get(project) as
      { hash: string; commands: string; trusted_at: string } | undefined;
    return row ? { hash: row.hash, commands: JSON.parse(row.commands) as unknown, trustedAt: row.trusted_at } : null;
  }

  setTrust(project: string, hash: string, commands: unknown): TrustRecord {
    const trustedAt = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO trust (project, hash, commands, trusted_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(project) DO UPDATE SET hash = excluded.hash, commands = excluded.commands, trusted_at = excluded.trusted_at`,
      )
      .run(project, hash, JSON.stringify(commands), trustedAt);
    return { hash, commands, trustedAt };
  }

  /** Records a path warren is about to make (before making it): the ledger scan, gc and rm consult. */
  recordMadePath(entry: { path: string; kind: MadePathKind; project: string; taskId: string | null }): void {
    this.db
      .prepare(
        `INSERT INTO made_paths (path, kind, project, task_id, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(path) DO UPDATE SET kind = excluded.kind, project = excluded.project, task_id = excluded.task_id, created_at = excluded.created_at`,
      )
      .run(entry.path, entry.kind, entry.project, entry.taskId, new Date().toISOString());
  }

  /** After warren deleted a path it made. */
  forgetMadePath(path: string): void {
    this.db.prepare('DELETE FROM made_paths WHERE path = ?').run(path);
  }

  madePaths(project: string): MadePath[] {
    return (
      this.db
        .prepare('SELECT path, kind, project, task_id, created_at FROM made_paths WHERE project = ? ORDER BY path')
        .all(project) as {
        path: string;
        kind: MadePathKind;
        project: string;
        task_id: string | null;
        created_at: string;
      }[]
    ).map((r) => ({ path: r.path, kind: r.kind, project: r.project, taskId: r.task_id, createdAt: r.created_at }));
  }

  isMadePath(project: string, path: string): boolean {
    return this.db.prepare('SELECT 1 FROM made_paths WHERE project = ? AND path = ?').get(project, path) !== undefined;
  }
}

export interface TrustRecord {
  hash: string;
  /** The command set as it was trusted (its canonical form). */
  commands: unknown;
  trustedAt: string;
}

/** A task's workspace, its metadata file, or an integration workspace (a detached worktree warren makes and removes itself). */
export type MadePathKind = 'workspace' | 'meta' | 'integration';

export interface MadePath {
  path: string;
  kind: MadePathKind;
  project: string;
  taskId: string | null;
  createdAt: string;
}
