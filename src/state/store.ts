import type { Db } from './db.js';
import { openDb, warrenHome } from './db.js';
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

function toTask(row: TaskRow): Task {
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
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

function toEvent(row: EventRow): WarrenEvent {
  return {
    seq: row.seq,
    at: row.at,
    project: row.project,
    taskId: row.task_id,
    kind: row.kind,
    level: row.level as WarrenEvent['level'],
    message: row.message,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

/** The one store: every read and write of warren's state goes through here. */
export class Store {
  readonly db: Db;
  readonly home: string;

  constructor(home = warrenHome()) {
    this.home = home;
    this.db = openDb(home);
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
    return (this.db.prepare('SELECT key, root, common_dir FROM projects ORDER BY key').all() as { key: string; root: string; common_dir: string }[]).map(
      (row) => ({ key: row.key, root: row.root, commonDir: row.common_dir }),
    );
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
    const row = this.db.prepare('SELECT * FROM tasks WHERE project = ? AND id = ?').get(project, id) as TaskRow | undefined;
    return row ? toTask(row) : null;
  }

  listTasks(project?: string): Task[] {
    const rows = (
      project === undefined
        ? this.db.prepare('SELECT * FROM tasks ORDER BY project, created_at, id').all()
        : this.db.prepare('SELECT * FROM tasks WHERE project = ? ORDER BY created_at, id').all(project)
    ) as TaskRow[];
    return rows.map(toTask);
  }

  setState(project: string, id: string, state: TaskState): void {
    this.db
      .prepare('UPDATE tasks SET state = ?, updated_at = ? WHERE project = ? AND id = ?')
      .run(state, new Date().toISOString(), project, id);
  }

  /** Shallow-merges `patch` into the task's JSON data. */
  mergeData(project: string, id: string, patch: Record<string, unknown>): void {
    const merge = this.db.transaction(() => {
      const row = this.db.prepare('SELECT data FROM tasks WHERE project = ? AND id = ?').get(project, id) as { data: string } | undefined;
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
    const recorded: WarrenEvent = {
      seq: Number(result.lastInsertRowid),
      at,
      project: event.project,
      taskId: event.taskId ?? null,
      kind: event.kind,
      level,
      message: event.message,
      data,
    };
    return recorded;
  }

  /** The task's events, oldest first, at most `limit` of the newest. */
  taskEvents(project: string, taskId: string, limit = 50): WarrenEvent[] {
    const rows = this.db
      .prepare('SELECT * FROM (SELECT * FROM events WHERE project = ? AND task_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq')
      .all(project, taskId, limit) as EventRow[];
    return rows.map(toEvent);
  }

  /** Events after `seq` (all projects), oldest first: how another process's changes are noticed. */
  eventsSince(seq: number, limit = 500): WarrenEvent[] {
    const rows = this.db.prepare('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(seq, limit) as EventRow[];
    return rows.map(toEvent);
  }

  lastEventSeq(): number {
    const row = this.db.prepare('SELECT MAX(seq) AS seq FROM events').get() as { seq: number | null };
    return row.seq ?? 0;
  }
}
