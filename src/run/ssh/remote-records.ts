import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../util/atomic.js';
import type { HostPorts, ProjectName } from './protocol.js';

/**
 * The coordinator's side of a task that runs on another machine. Its record —
 * `$WARREN_HOME/ssh/<project>/<id>.json`: the host, the repository there, the commit the task's
 * branch had when it was last sent or fetched (`sent`), and `pending` — is written before each
 * change on the host: `pending` says the host may hold commits not fetched back yet (a run, a
 * commit there), and stays set until they are fetched and checked. So a lost connection, a
 * killed warren on either side, leaves a record that `scan` names and the next command repairs
 * (`syncBack`): nothing the agent committed there is lost, and only checked commits move the
 * task's branch here.
 */
export interface RemoteRecord {
  host: string;
  project: ProjectName;
  repo: string | null;
  sent: string;
  pending: boolean;
  /** Set when the host has the task's workspace (after `create` answered). */
  created: boolean;
  /** The workspace's path there. */
  path?: string;
  /** The task's port block there (the host's `new` took it; none is taken here). */
  ports?: HostPorts | null;
}

function recordFile(home: string, key: string, id: string): string {
  return path.join(home, 'ssh', createHash('sha256').update(key).digest('hex').slice(0, 16), `${id}.json`);
}

export function readRecord(home: string, key: string, id: string): RemoteRecord | null {
  try {
    return JSON.parse(fs.readFileSync(recordFile(home, key, id), 'utf8')) as RemoteRecord;
  } catch {
    return null;
  }
}

export function writeRecord(home: string, key: string, id: string, record: RemoteRecord): void {
  const file = recordFile(home, key, id);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, `${JSON.stringify(record)}\n`);
}

const preparedFile = (home: string, key: string, host: string): string =>
  path.join(path.dirname(recordFile(home, key, 'x')), 'hosts', `${host}.json`);

export function readPrepared(home: string, key: string, host: string): string | null {
  try {
    const { repo } = JSON.parse(fs.readFileSync(preparedFile(home, key, host), 'utf8')) as { repo?: unknown };
    return typeof repo === 'string' ? repo : null;
  } catch {
    return null;
  }
}

export function writePrepared(home: string, key: string, host: string, repo: string): void {
  const file = preparedFile(home, key, host);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, `${JSON.stringify({ repo })}\n`);
}

export function forgetRecord(home: string, key: string, id: string): void {
  fs.rmSync(recordFile(home, key, id), { force: true });
}

/** This project's records (a task with no row is a stray: `scan` names it, `gc` removes it there). */
export function projectRecords(home: string, key: string): { id: string; record: RemoteRecord }[] {
  const dir = path.dirname(recordFile(home, key, 'x'));
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .flatMap((n) => {
      const id = n.slice(0, -'.json'.length);
      const record = readRecord(home, key, id);
      return record ? [{ id, record }] : [];
    });
}
