import net from 'node:net';
import { WarrenError } from '../errors.js';
import type { Store } from '../state/store.js';

/**
 * Per-task port blocks from the `ports` registry (migration 002-ports): one row per port, so
 * the primary key itself keeps blocks disjoint across every task of every project sharing
 * this WARREN_HOME, whatever the concurrency. Allocation reserves a block inside an
 * IMMEDIATE transaction, then checks each port is actually free by binding it; a busy port
 * is avoided and the next block tried.
 */

/** Below Linux's default ephemeral range (32768–60999), so outgoing connections do not take them. */
export const PORT_RANGE = { first: 20000, last: 32767 } as const;
export const DEFAULT_PORT_COUNT = 10;

/**
 * The range task blocks come from: `WARREN_PORT_RANGE=FIRST-LAST`, else PORT_RANGE. Another
 * WARREN_HOME on the machine (another user's, a test's) keeps a registry of its own: a range of
 * its own keeps its blocks from overlapping this one's. A value that is not a range is refused.
 */
export function portRange(env: NodeJS.ProcessEnv = process.env): { first: number; last: number } {
  const raw = env.WARREN_PORT_RANGE;
  if (raw === undefined || raw === '') return PORT_RANGE;
  const m = /^(\d{4,5})-(\d{4,5})$/.exec(raw.trim());
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  if (!m || first < 1024 || last > 65535 || last < first)
    throw new WarrenError(
      'CONFIG_INVALID',
      `WARREN_PORT_RANGE=${JSON.stringify(raw)} is not a range of ports FIRST-LAST between 1024 and 65535; nothing was changed.`,
      {
        hint: `Set it like \`WARREN_PORT_RANGE=21000-22999\`, or unset it for ${PORT_RANGE.first}-${PORT_RANGE.last}.`,
      },
    );
  return { first, last };
}

export interface PortBlock {
  first: number;
  count: number;
}

/** The lowest start of `count` consecutive ports in the range, none of them in `taken`. Pure. */
export function findFreeRun(
  taken: ReadonlySet<number>,
  count: number,
  range: { first: number; last: number },
): number | null {
  let start = range.first;
  while (start + count - 1 <= range.last) {
    let clash = -1;
    for (let p = start; p < start + count; p++) {
      if (taken.has(p)) clash = p;
    }
    if (clash === -1) return start;
    start = clash + 1;
  }
  return null;
}

export function portsOf(store: Store, project: string, taskId: string): PortBlock | null {
  const row = store.db
    .prepare('SELECT MIN(port) AS first, COUNT(*) AS count FROM ports WHERE project = ? AND task_id = ?')
    .get(project, taskId) as { first: number | null; count: number };
  return row.first === null ? null : { first: row.first, count: row.count };
}

/** Rows whose task no longer exists (a creation that rolled back): returned to the pool. */
function reclaimOrphans(store: Store): number {
  return store.db
    .prepare(
      'DELETE FROM ports WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.project = ports.project AND t.id = ports.task_id)',
    )
    .run().changes;
}

export interface Allocation {
  block: PortBlock;
  /** Ports found busy by the bind check and skipped. */
  busySkipped: number[];
  reclaimed: number;
}

/** The block a reservation would take at some moment, and whether each of its ports could be bound then. */
export interface PortCheck {
  block: PortBlock;
  free: boolean[];
}

/**
 * Checks, ahead of the reservation, the block `allocatePorts` would reserve now: `warren new`
 * runs it while git makes the worktree (src/run/execution-steps.ts), after one turn of the event loop so
 * that git has been started first. The first bind of a process costs ~10 ms (Node loads its
 * cluster module), which is then spent while waiting for git instead of after it. Reserves
 * nothing: `allocatePorts` uses the answer only if it reserves this same block.
 */
export async function precheckPorts(store: Store, count: number): Promise<PortCheck | null> {
  await new Promise((resolve) => setImmediate(resolve));
  const taken = new Set((store.db.prepare('SELECT port FROM ports').all() as { port: number }[]).map((r) => r.port));
  const first = findFreeRun(taken, count, portRange());
  if (first === null) return null;
  const ports = Array.from({ length: count }, (_, i) => first + i);
  return { block: { first, count }, free: await Promise.all(ports.map((p) => isPortFree(p))) };
}

export async function allocatePorts(
  store: Store,
  project: string,
  taskId: string,
  count: number,
  checked: PortCheck | null = null,
): Promise<Allocation> {
  const range = portRange();
  const busy = new Set<number>();
  let reclaimed = 0;
  let ahead = checked;
  for (;;) {
    const reserve = store.db.transaction((): PortBlock | null => {
      const existing = portsOf(store, project, taskId);
      if (existing) return existing;
      reclaimed += reclaimOrphans(store);
      const taken = new Set(
        (store.db.prepare('SELECT port FROM ports').all() as { port: number }[]).map((r) => r.port),
      );
      for (const p of busy) taken.add(p);
      const first = findFreeRun(taken, count, range);
      if (first === null) return null;
      const insert = store.db.prepare('INSERT INTO ports (port, project, task_id, allocated_at) VALUES (?, ?, ?, ?)');
      const now = new Date().toISOString();
      for (let p = first; p < first + count; p++) insert.run(p, project, taskId, now);
      return { first, count };
    });
    const block = reserve.immediate();
    if (block === null) {
      throw new WarrenError(
        'PORTS_EXHAUSTED',
        `no block of ${count} free ports is left in ${range.first}-${range.last}; the task was not created.`,
        {
          hint: 'Remove finished tasks (`warren rm`), or lower ports.count in warren.yaml.',
        },
      );
    }
    // Every port of the block at once: each check is a bind and a close, mostly waiting. A
    // check made ahead counts only for the very block it checked, and only once.
    const ports = Array.from({ length: block.count }, (_, i) => block.first + i);
    const free =
      ahead && ahead.block.first === block.first && ahead.block.count === block.count
        ? ahead.free
        : await Promise.all(ports.map((p) => isPortFree(p)));
    ahead = null;
    const inUse = ports.filter((_, i) => !free[i]);
    if (inUse.length === 0) return { block, busySkipped: [...busy].sort((a, b) => a - b), reclaimed };
    for (const p of inUse) busy.add(p);
    releasePorts(store, project, taskId);
  }
}

export function releasePorts(store: Store, project: string, taskId: string): number {
  return store.db.prepare('DELETE FROM ports WHERE project = ? AND task_id = ?').run(project, taskId).changes;
}

/** True when both the wildcard and the loopback address can bind the port right now. */
export async function isPortFree(port: number): Promise<boolean> {
  // One after the other: the two binds of one port would otherwise contend with each other.
  for (const host of ['0.0.0.0', '127.0.0.1']) {
    if (!(await canBind(port, host))) return false;
  }
  return true;
}

function canBind(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
