import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../util/atomic.js';

/**
 * The ledger of a task's claim: `$WARREN_HOME/k8s/<id>/claim.json`, written before the claim is
 * asked for (task-claim.ts), so a crash between the two leaves a record `rm` and `gc` find.
 * Read without loading the cluster's client (it costs part of a second). The merge queue's gate
 * in a cluster has a record of its own, as a task (src/queue/gate-k8s.ts).
 */
export interface Ledger {
  cluster: string;
  claim: string;
  project: string;
  task: string;
  createdAt: string;
  /** The task's commit the sandbox's clone was last given (or brought back from): what the next bundle need not carry. */
  sentHead: string | null;
  /** The tree of the sandbox's files last brought back: unchanged, nothing is brought. */
  broughtTree: string | null;
  /**
   * A claim of the merge queue's gate (`task` is its integration workspace's id, no task of its
   * own): the warren process that made it. While that process lives, `gc` leaves the claim.
   */
  gate?: GateOwner;
}

export interface GateOwner {
  pid: number;
  host: string;
  /** Kernel start time of the process, to tell a reused pid from it. */
  procStart: string | null;
}

/** The claim's name and its record's folder, for a task of a project. */
export function claimPlace(home: string, project: string, taskId: string): { name: string; dir: string } {
  const id = createHash('sha256').update(`${home}\0${project}\0${taskId}`).digest('hex').slice(0, 16);
  return { name: `warren-${id}`, dir: path.join(home, 'k8s', id) };
}

export function readLedger(dir: string): Ledger | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'claim.json'), 'utf8')) as Ledger;
  } catch {
    return null;
  }
}

export function writeLedger(dir: string, ledger: Ledger): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileAtomic(path.join(dir, 'claim.json'), `${JSON.stringify(ledger)}\n`);
}

/** The ledger's records: which claims warren made for which task (gc's list). */
export function recordedClaims(home: string): Ledger[] {
  const root = path.join(home, 'k8s');
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root).flatMap((id) => {
    const l = readLedger(path.join(root, id));
    return l ? [l] : [];
  });
}
