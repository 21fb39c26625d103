import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic.js';

/** The ownership record kept beside each workspace: `<root>/<ID>.warren.json`. */
export interface WorkspaceMeta {
  version: 1;
  project: string;
  taskId: string;
  branch: string;
  path: string;
  createdAt: string;
}

export function metaPathFor(workspacePath: string): string {
  return `${workspacePath}.warren.json`;
}

export function writeMeta(meta: WorkspaceMeta): void {
  writeFileAtomic(metaPathFor(meta.path), JSON.stringify(meta, null, 2) + '\n');
}

export function readMeta(workspacePath: string): WorkspaceMeta | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(metaPathFor(workspacePath), 'utf8')) as WorkspaceMeta;
    return parsed.version === 1 ? parsed : null;
  } catch {
    return null;
  }
}

export function removeMeta(workspacePath: string): void {
  fs.rmSync(metaPathFor(workspacePath), { force: true });
}

export function isMetaFile(name: string): boolean {
  return name.endsWith('.warren.json');
}

export function taskIdFromMetaFile(file: string): string {
  return path.basename(file).slice(0, -'.warren.json'.length);
}
