import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** Test helpers for services: PostgreSQL's own client as warren's admin role, and stopping whatever a test left running. */

export function pgBin(tool: string): string {
  const versions = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return path.join('/usr/lib/postgresql', versions[0] ?? '15', 'bin', tool);
}

interface Cluster {
  port: number;
  password: string;
}

export function cluster(home: string): Cluster {
  return JSON.parse(fs.readFileSync(path.join(home, 'services', 'postgres', 'cluster.json'), 'utf8')) as Cluster;
}

/** psql as warren's admin role on the cluster of `home`; its output (unaligned, tuples only). */
export function adminSql(home: string, sql: string, database = 'postgres'): string {
  const c = cluster(home);
  return execFileSync(pgBin('psql'), ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql], {
    env: {
      ...process.env,
      PGHOST: path.join(home, 'services', 'postgres', 'run'),
      PGPORT: String(c.port),
      PGUSER: 'warren',
      PGPASSWORD: c.password,
      PGDATABASE: database,
    },
    encoding: 'utf8',
  }).trim();
}

/** psql with a URL (a task's DATABASE_URL): status, stdout, stderr. */
export function urlSql(url: string, sql: string): { code: number; out: string; err: string } {
  const r = spawnSync(pgBin('psql'), ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { encoding: 'utf8' });
  return { code: r.status ?? -1, out: r.stdout.trim(), err: r.stderr.trim() };
}

/** The databases and roles warren made on the cluster (templates included), sorted. */
export function warrenObjects(home: string): { databases: string[]; roles: string[] } {
  const list = (sql: string) => adminSql(home, sql).split('\n').filter(Boolean).sort();
  return {
    databases: list("SELECT datname FROM pg_database WHERE datname LIKE 'warren\\_%'"),
    roles: list("SELECT rolname FROM pg_roles WHERE rolname LIKE 'warren\\_%'"),
  };
}

/** Every daemon warren recorded under `home` (services and its PostgreSQL server), or under `dir` of it: pid of each wrapper still alive. */
export function livingDaemons(home: string, dir = path.join(home, 'services')): number[] {
  const pids: number[] = [];
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'daemon.json') {
        const { pid } = JSON.parse(fs.readFileSync(p, 'utf8')) as { pid: number };
        if (fs.existsSync(`/proc/${pid}`) && !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')))
          pids.push(pid);
      }
    }
  };
  walk(dir);
  return pids;
}

/** At the end of the test, whatever it left running under `home` is killed (its namespace with it). */
export function stopServicesAfter(home: string): void {
  onTestFinished(() => {
    for (const pid of livingDaemons(home)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
}

/** True while something accepts connections on 127.0.0.1:port. */
export function listening(port: number): boolean {
  const r = spawnSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' });
  return r.stdout.trim() !== '';
}
