/**
 * Schema migrations, applied in order and recorded by name. Append new ones at the end; never
 * edit one that has shipped. Each runs inside the same IMMEDIATE transaction as its record, so
 * two warren processes opening a new database at once apply each migration exactly once.
 */
export interface Migration {
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    name: '001-core',
    sql: `
      CREATE TABLE projects (
        key TEXT PRIMARY KEY,
        root TEXT NOT NULL,
        common_dir TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE tasks (
        project TEXT NOT NULL REFERENCES projects(key),
        id TEXT NOT NULL,
        type TEXT NOT NULL,
        branch TEXT NOT NULL,
        path TEXT NOT NULL,
        base TEXT NOT NULL,
        base_commit TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (project, id)
      );
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        project TEXT,
        task_id TEXT,
        kind TEXT NOT NULL,
        level TEXT NOT NULL,
        message TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX events_by_task ON events (project, task_id, seq);
      -- Append-only: the log of what happened is never rewritten.
      CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
      CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    `,
  },
  {
    // Every supervised run (src/run/): what ran, how it ended, where its output is.
    name: '002-runs',
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        task_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        argv TEXT NOT NULL,
        cwd TEXT NOT NULL,
        sandbox TEXT NOT NULL,
        containment TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        exit_code INTEGER,
        signal TEXT,
        timed_out INTEGER NOT NULL DEFAULT 0,
        canceled_by TEXT,
        reason TEXT,
        log_path TEXT NOT NULL
      );
      CREATE INDEX runs_by_task ON runs (project, task_id, started_at);
    `,
  },
  {
    // One row per port: the primary key makes two tasks' blocks disjoint across every project.
    name: '002-ports',
    sql: `
      CREATE TABLE ports (
        port INTEGER PRIMARY KEY,
        project TEXT NOT NULL,
        task_id TEXT NOT NULL,
        allocated_at TEXT NOT NULL
      );
      CREATE INDEX ports_by_task ON ports (project, task_id);
    `,
  },
  {
    // Multi-step mutations in flight: written before the first mutation, deleted after the last.
    // One left by a process that died is what the next command repairs (src/workspace/operation.ts).
    name: '003-intents',
    sql: `
      CREATE TABLE intents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        task_id TEXT,
        op TEXT NOT NULL,
        step TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}',
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        proc_start TEXT,
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX intents_by_project ON intents (project);
    `,
  },
  {
    // The merge queue (src/queue/): one row per land asked for, in order, and one lease per
    // repository naming the process that works the queue.
    name: '004-queue',
    sql: `
      CREATE TABLE queue (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        task_id TEXT NOT NULL,
        state TEXT NOT NULL,
        options TEXT NOT NULL DEFAULT '{}',
        enqueued_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        reason TEXT,
        code TEXT,
        log TEXT,
        planned TEXT,
        result TEXT,
        gate_task TEXT
      );
      CREATE INDEX queue_by_project ON queue (project, state, id);
      CREATE TABLE queue_lease (
        project TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        proc_start TEXT,
        token TEXT NOT NULL,
        since TEXT NOT NULL,
        heartbeat TEXT NOT NULL
      );
      `,
  },
  {
    // Trust on first use: the hash of the repository commands (setup, verify, teardown, agents)
    // this user accepted for a project, and the set itself, to show what changed since.
    name: '003-trust',
    sql: `
      CREATE TABLE trust (
        project TEXT PRIMARY KEY,
        hash TEXT NOT NULL,
        commands TEXT NOT NULL,
        trusted_at TEXT NOT NULL
      );
    `,
  },
  {
    // The ledger of paths warren made (workspaces, their metadata files): written before a path
    // is made, deleted after warren deleted it. scan, gc and rm delete nothing that is not here.
    name: '003-made-paths',
    sql: `
      CREATE TABLE made_paths (
        path TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        project TEXT NOT NULL,
        task_id TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX made_paths_by_project ON made_paths (project);
    `,
  },
  {
    // Review comments on a task's diff (src/review/): each names a line, says something, keeps the
    // part of the diff it was made on, and is open until resolved. `task_created_at` ties it to
    // one task: an ID used again after `rm` starts with none.
    name: '005-comments',
    sql: `
      CREATE TABLE comments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        task_id TEXT NOT NULL,
        task_created_at TEXT NOT NULL,
        path TEXT NOT NULL,
        line INTEGER NOT NULL,
        side TEXT NOT NULL,
        body TEXT NOT NULL,
        hunk TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        resolved_at TEXT,
        sent_run TEXT
      );
      CREATE INDEX comments_by_task ON comments (project, task_id, id);
    `,
  },
  {
    // The archives `rm --discard` made (src/workspace/archive-records.ts): each ref and the commit
    // it was made at, written before the ref. An agent shares the repository's refs, so a ref
    // under refs/warren/archive/ is restored only when this table names it at that commit. The
    // archives made before this table are read back from their task.archived events.
    name: '006-archives',
    sql: `
      CREATE TABLE archives (
        project TEXT NOT NULL,
        ref TEXT NOT NULL,
        task_id TEXT NOT NULL,
        commit_oid TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (project, ref)
      );
      INSERT OR IGNORE INTO archives (project, ref, task_id, commit_oid, created_at)
        SELECT project, json_extract(data, '$.archive'), task_id, json_extract(data, '$.commit'), at
        FROM events
        WHERE kind = 'task.archived' AND project IS NOT NULL AND task_id IS NOT NULL
          AND json_extract(data, '$.archive') IS NOT NULL AND json_extract(data, '$.commit') IS NOT NULL;
    `,
  },
  {
    // The task branches warren made (src/workspace/branch-records.ts): each branch and the commit it
    // was made at, written before git makes it. A `new` killed inside `git worktree add` leaves a
    // branch that only this record says is warren's, and that nothing was committed on since.
    name: '007-made-branches',
    sql: `
      CREATE TABLE made_branches (
        project TEXT NOT NULL,
        branch TEXT NOT NULL,
        task_id TEXT NOT NULL,
        tip TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (project, branch)
      );
    `,
  },
  {
    // What warren made on a PostgreSQL server for a task's services (src/services/ledger.ts):
    // each database and role, written before it is made and deleted after it was dropped, so
    // that `gc` drops only what warren made. `task_id` is null for a template shared by tasks.
    name: '007-service-objects',
    sql: `
      CREATE TABLE service_objects (
        server TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        project TEXT NOT NULL,
        task_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (server, kind, name)
      );
      CREATE INDEX service_objects_by_task ON service_objects (project, task_id);
    `,
  },
  {
    // The conflict map of the live fleet (src/conflicts/records.ts): each task's last snapshot
    // (its committed tip plus its uncommitted work, as a commit) and each pair's merge, keyed by
    // the two commits it was computed on, so that only pairs whose trees changed are merged again.
    name: '008-conflicts',
    sql: `
      CREATE TABLE conflict_snapshots (
        project TEXT NOT NULL,
        task_id TEXT NOT NULL,
        tip TEXT NOT NULL,
        commit_oid TEXT NOT NULL,
        base_tip TEXT NOT NULL,
        touched TEXT NOT NULL,
        base_touched TEXT NOT NULL,
        error TEXT,
        taken_at TEXT NOT NULL,
        PRIMARY KEY (project, task_id)
      );
      CREATE TABLE conflict_pairs (
        project TEXT NOT NULL,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        a_commit TEXT NOT NULL,
        b_commit TEXT NOT NULL,
        conflict INTEGER NOT NULL,
        result TEXT NOT NULL,
        computed_at TEXT NOT NULL,
        PRIMARY KEY (project, a, b)
      );
    `,
  },
];
