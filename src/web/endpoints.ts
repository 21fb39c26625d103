import fs from 'node:fs';
import type { PortBlock } from '../run/ports.js';

/**
 * What a task serves, as links the page can open: each of its services by name (`web :20048`),
 * and each other port of its block that something is listening on (a dev server on
 * $WARREN_PORT, say).
 *
 * Listening ports are read from the kernel's socket tables (`/proc/net/tcp`, `tcp6`: state 0A,
 * LISTEN), never by connecting to them: the dashboard's refresh must not poke a task's servers.
 */

export interface TaskEndpoint {
  kind: 'port' | 'service';
  /** `WARREN_PORT` for the block's first port, `port N` for the others; a service's own name. */
  name: string;
  port: number;
  /** Where a browser opens it; null for a service that speaks no HTTP (redis). */
  url: string | null;
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

/** A service of the task that listens on a port of its own; `http` when a browser can open it (a dev server). */
export interface ServicePort {
  name: string;
  port: number;
  http: boolean;
}

/**
 * Pure: what listens on a task's port block, by name: each of its services (a link when a browser
 * can open it), then the other ports something listens on. The first port is offered when
 * nothing can be told.
 */
export function portEndpoints(
  block: PortBlock | null,
  listening: ReadonlySet<number> | null,
  services: readonly ServicePort[] = [],
): TaskEndpoint[] {
  const out: TaskEndpoint[] = [];
  for (const s of services) {
    out.push({
      kind: 'service',
      name: s.name,
      port: s.port,
      url: s.http ? `http://127.0.0.1:${s.port}/` : null,
      listening: listening === null ? null : listening.has(s.port),
    });
  }
  if (!block) return out;
  const named = new Set(services.map((s) => s.port));
  for (let port = block.first; port < block.first + block.count; port++) {
    if (named.has(port)) continue;
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
