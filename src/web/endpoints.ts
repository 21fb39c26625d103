import fs from 'node:fs';
import type { PortBlock } from '../run/ports.js';

/**
 * What a task serves, as links the page can open: each port of its block that something is
 * listening on (a dev server on $WARREN_PORT, say). A list of named entries, so that a task's
 * declared services can join it as entries of their own kind.
 *
 * Listening ports are read from the kernel's socket tables (`/proc/net/tcp`, `tcp6`: state 0A,
 * LISTEN), never by connecting to them: the dashboard's refresh must not poke a task's servers.
 */

export interface TaskEndpoint {
  kind: 'port' | 'service';
  /** `WARREN_PORT` for the block's first port, `port N` for the others; a service's own name. */
  name: string;
  port: number;
  url: string;
  /** Something listens there now; null when this machine cannot tell (no /proc/net). */
  listening: boolean | null;
}

const LISTEN = '0A';

/** Pure: the local ports in LISTEN state in one `/proc/net/tcp` or `/proc/net/tcp6` table. */
export function listeningIn(table: string): number[] {
  const ports: number[] = [];
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    const local = cols[1];
    if (cols[3] !== LISTEN || !local) continue;
    const port = parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
    if (Number.isInteger(port)) ports.push(port);
  }
  return ports;
}

let cached: { at: number; ports: Set<number> | null } | null = null;

/** The ports something listens on in this network namespace, read at most every half second; null when unreadable. */
export function listeningPorts(now = Date.now()): Set<number> | null {
  if (cached && now - cached.at < 500) return cached.ports;
  let ports: Set<number> | null = new Set<number>();
  let read = 0;
  for (const name of ['tcp', 'tcp6']) {
    try {
      for (const p of listeningIn(fs.readFileSync(`/proc/net/${name}`, 'utf8'))) ports.add(p);
      read++;
    } catch {
      // tcp6 is absent when IPv6 is off; both absent off Linux
    }
  }
  if (read === 0) ports = null;
  cached = { at: now, ports };
  return ports;
}

/** Pure: the links of a task's port block, given what listens; the first port is offered when nothing can be told. */
export function portEndpoints(block: PortBlock | null, listening: ReadonlySet<number> | null): TaskEndpoint[] {
  if (!block) return [];
  const out: TaskEndpoint[] = [];
  for (let port = block.first; port < block.first + block.count; port++) {
    const on = listening === null ? (port === block.first ? null : false) : listening.has(port);
    if (on === false) continue;
    out.push({
      kind: 'port',
      name: port === block.first ? 'WARREN_PORT' : `port ${port}`,
      port,
      url: `http://127.0.0.1:${port}/`,
      listening: on,
    });
  }
  return out;
}
