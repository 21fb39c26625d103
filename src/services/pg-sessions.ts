import fs from 'node:fs';
import type { ProjectContext } from '../workspace/context.js';
import type { Task } from '../state/types.js';
import type { AfterRunStep } from '../workspace/types.js';
import { serverFor } from './postgres-task.js';
import { pgLiteral, pgQuery } from './pg-sql.js';

/**
 * A task's database sessions end with its runs. A run's processes end with it, and with them
 * its connections — but a backend busy in `SELECT pg_sleep(…)` does not read its socket, and
 * notices the client has gone only when its query ends (`client_connection_check_interval`, set
 * on the role, is a setting the session may turn off). So after each run, every session of the
 * task's role whose client has gone — the server's end of its connection is in CLOSE_WAIT, or
 * is no longer there — is terminated. A session whose client is still there (a dev server of
 * the task, another run still going) is left alone.
 */

/** TCP states of /proc/net/tcp that say the client closed (CLOSE_WAIT, LAST_ACK) or is going. */
const CLIENT_GONE = new Set(['08', '09']);

/** Pure: `/proc/net/tcp`'s rows as local port, remote port and state, for connections on 127.0.0.1. */
export function loopbackConnections(table: string): { local: number; remote: number; state: string }[] {
  const out: { local: number; remote: number; state: string }[] = [];
  for (const line of table.split('\n').slice(1)) {
    const m = /^\s*\d+:\s+([0-9A-F]{8}):([0-9A-F]{4})\s+([0-9A-F]{8}):([0-9A-F]{4})\s+([0-9A-F]{2})/i.exec(line);
    if (!m || m[1] !== '0100007F' || m[3] !== '0100007F') continue;
    out.push({
      local: parseInt(m[2] ?? '0', 16),
      remote: parseInt(m[4] ?? '0', 16),
      state: (m[5] ?? '').toUpperCase(),
    });
  }
  return out;
}

/** Pure: which sessions (backend pid, client port) have a client that is gone, given the server's port and its connections. */
export function orphanSessions(
  sessions: readonly { pid: number; clientPort: number }[],
  serverPort: number,
  connections: readonly { local: number; remote: number; state: string }[],
): number[] {
  return sessions
    .filter((s) => {
      const own = connections.filter((c) => c.local === serverPort && c.remote === s.clientPort);
      return own.length === 0 || own.every((c) => CLIENT_GONE.has(c.state));
    })
    .map((s) => s.pid);
}

/** Terminates the sessions of `role` on warren's own server whose client has gone; the pids it ended. */
async function endOrphanSessions(ctx: ProjectContext, task: Task, role: string): Promise<number[]> {
  const server = await serverFor(ctx, task.id);
  if (server.kind !== 'warren') return [];
  const rows = await pgQuery(
    server.admin,
    `SELECT pid, client_port FROM pg_stat_activity WHERE usename = ${pgLiteral(role)} AND client_addr = '127.0.0.1'`,
  );
  const sessions = rows
    .split('\n')
    .filter((l) => l.includes('|'))
    .map((l) => {
      const [pid, port] = l.split('|');
      return { pid: Number(pid), clientPort: Number(port) };
    });
  if (sessions.length === 0) return [];
  let table = '';
  try {
    table = fs.readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return []; // no /proc: nothing to tell a gone client by, and nothing is ended
  }
  const orphans = orphanSessions(sessions, server.port, loopbackConnections(table));
  if (orphans.length === 0) return [];
  await pgQuery(
    server.admin,
    `SELECT pg_terminate_backend(pid) FROM unnest(ARRAY[${orphans.join(',')}]::int[]) AS pid`,
  );
  return orphans;
}

export const servicesAfterRun: AfterRunStep = {
  name: 'services',
  async run(ctx, task) {
    for (const [name, fact] of Object.entries(task.data.services ?? {})) {
      if (fact.kind !== 'postgres' || fact.server !== 'warren') continue;
      try {
        const ended = await endOrphanSessions(ctx, task, fact.database);
        if (ended.length === 0) continue;
        ctx.store.addEvent({
          project: ctx.key,
          taskId: task.id,
          kind: 'service.sessions_ended',
          level: 'warn',
          message: `service ${name}: ended ${ended.length} session(s) of role ${fact.database} whose run had ended (backend pid(s) ${ended.join(', ')})`,
          data: { name, role: fact.database, pids: ended },
        });
      } catch (err) {
        ctx.store.addEvent({
          project: ctx.key,
          taskId: task.id,
          kind: 'service.sessions_ended',
          level: 'warn',
          message: `service ${name}: could not look for sessions its run left: ${err instanceof Error ? err.message : String(err)}`,
          data: { name, role: fact.database, pids: [] },
        });
      }
    }
  },
};
