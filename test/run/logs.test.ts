import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../helpers/repo.js';

interface GcOut {
  removed: { kind: string; path?: string; id?: string }[];
  kept: { kind: string; path: string; reason: string }[];
}

function runRows(home: string): { task_id: string }[] {
  const db = new Database(path.join(home, 'state.db'), { readonly: true });
  try {
    return db.prepare('SELECT task_id FROM runs ORDER BY task_id').all() as { task_id: string }[];
  } finally {
    db.close();
  }
}

function age(dir: string, days: number): void {
  const when = new Date(Date.now() - days * 24 * 60 * 60 * 1000);
  for (const name of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, name), when, when);
  fs.utimesSync(dir, when, when);
}

describe('run logs after rm', () => {
  it('are kept 7 days after the last run of a removed task, then gc deletes them and their runs rows; a live task’s logs stay', async () => {
    const repo = makeRepo();
    for (const id of ['gone', 'live']) {
      expect((await repo.warren('new', 'feat', id)).code).toBe(0);
      expect((await repo.warren('exec', id, '--', 'sh', '-c', 'echo hello')).code).toBe(0);
    }
    const projectLogs = path.join(repo.home, 'logs');
    const [project] = fs.readdirSync(projectLogs);
    const gone = path.join(projectLogs, project ?? '', 'gone');
    const live = path.join(projectLogs, project ?? '', 'live');
    expect(fs.readdirSync(gone).some((f) => f.endsWith('-exec.log'))).toBe(true);
    expect((await repo.warren('rm', 'gone', '--delete-branch')).code).toBe(0);

    // Fresh: kept, and gc says until when.
    const first = await repo.warrenJson<GcOut>('gc');
    expect(first.code).toBe(0);
    expect(first.json.kept).toContainEqual({
      kind: 'run_logs',
      path: gone,
      reason: expect.stringMatching(/kept 7 days after its last run; gc deletes them from \d{4}-\d\d-\d\d/),
    });
    expect(fs.existsSync(gone)).toBe(true);

    // Eight days later: deleted, with the runs rows that named them. The live task's old logs stay.
    age(gone, 8);
    age(live, 8);
    const second = await repo.warrenJson<GcOut>('gc');
    expect(second.json.removed).toContainEqual({ kind: 'run_logs', path: gone, id: 'gone', action: 'delete-dir' });
    expect(fs.existsSync(gone)).toBe(false);
    expect(fs.readdirSync(live).length).toBeGreaterThan(0);
    expect(second.json.kept.filter((k) => k.kind === 'run_logs')).toEqual([]);
    expect(runRows(repo.home).map((r) => r.task_id)).not.toContain('gone');
    expect(runRows(repo.home).map((r) => r.task_id)).toContain('live');
  });
});
