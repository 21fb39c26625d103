import type { AuditSection } from '../workspace/types.js';
import type { Task } from '../state/types.js';
import { portsOf, type PortBlock } from './ports.js';
import { remoteHostName } from './ssh/hosts.js';
import { readRecord } from './ssh/remote-records.js';
import { environOf, hasProc, listeningSocketsSeenBy, listPids, socketInodesOf } from '../system/proc.js';

/**
 * `warren audit ID`, section "ports": the task's block, and every TCP port its processes are
 * listening on, with the ones outside the block flagged. A task's processes are found by the
 * WARREN_TASK_ID/WARREN_WORKSPACE every supervised command (and its children) inherits.
 */
export interface ListeningPort {
  pid: number;
  address: string;
  port: number;
  inBlock: boolean;
}

export function taskProcesses(task: Task): number[] {
  return listPids().filter((pid) => {
    if (pid === process.pid) return false;
    const env = environOf(pid);
    return env.get('WARREN_TASK_ID') === task.id && env.get('WARREN_WORKSPACE') === task.path;
  });
}

export function listeningPortsOf(pids: readonly number[], block: PortBlock | null): ListeningPort[] {
  const out: ListeningPort[] = [];
  const seen = new Set<string>();
  for (const pid of pids) {
    const inodes = socketInodesOf(pid);
    if (inodes.size === 0) continue;
    for (const sock of listeningSocketsSeenBy(pid)) {
      const key = `${sock.inode}`;
      if (!inodes.has(sock.inode) || seen.has(key)) continue;
      seen.add(key);
      const inBlock = block !== null && sock.port >= block.first && sock.port < block.first + block.count;
      out.push({ pid, address: sock.address, port: sock.port, inBlock });
    }
  }
  return out.sort((a, b) => a.port - b.port || a.pid - b.pid);
}

/** `warren audit ID`, section "ports". */
export const portsAudit: AuditSection = {
  name: 'ports',
  async collect(ctx, task) {
    const host = remoteHostName(task);
    if (host !== null) {
      // Its processes are the host's: the block is the one the host's `new` took there, and what listens is seen there.
      const block = readRecord(ctx.store.home, ctx.key, task.id)?.ports ?? null;
      const text = block ? `${block.first}-${block.first + block.count - 1}` : 'unknown (the host did not say)';
      return {
        data: { host, block, listening: [], outside: [] },
        lines: [
          `ports: block ${text} on host ${host}, taken there by the host's warren (none here); \`warren audit ${task.id}\` there lists what listens`,
        ],
      };
    }
    const block = portsOf(ctx.store, ctx.key, task.id);
    const blockText = block ? `${block.first}-${block.first + block.count - 1}` : 'none';
    if (!hasProc()) {
      return {
        data: { block, listening: [], outside: [], note: 'no /proc: listening ports not inspected' },
        lines: [`ports: block ${blockText}; listening ports not inspected (no /proc on this system)`],
      };
    }
    const listening = listeningPortsOf(taskProcesses(task), block);
    const outside = listening.filter((l) => !l.inBlock);
    const lines = [`ports: block ${blockText}`];
    if (listening.length === 0) lines.push('  no process of this task is listening');
    for (const l of listening)
      lines.push(`  ${l.inBlock ? 'ok     ' : 'OUTSIDE'} ${l.address}:${l.port} (pid ${l.pid})`);
    return { data: { block, listening, outside }, lines };
  },
};
