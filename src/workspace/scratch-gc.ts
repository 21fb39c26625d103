import os from 'node:os';
import { scratchIndexPid, scratchIndexPrefix } from '../git/scratch-index.js';
import { isAlive } from '../system/proc.js';
import { ownTempFolders } from '../system/own-temp-folders.js';
import { removeTree } from '../system/remove-tree.js';
import { recordRemoval } from './gc-record.js';
import type { GcCollected, GcStep } from './types.js';

/** What git leaves in a throwaway index's folder: the index, and its lock while it writes one. */
const INDEX_FILES: ReadonlySet<string> = new Set(['index', 'index.lock']);

/**
 * The throwaway indexes (`warren-index-TAG-PID-XXXXXX` in the temporary folder,
 * src/git/scratch-index.ts) that a warren of this WARREN_HOME, killed while it wrote a tree,
 * left behind. Only this user's own (its owner, 0700, mkdtemp's mode) whose process is gone, and
 * holding nothing but git's index files; a live process's, another home's and anything else are
 * left as they are.
 */
export function collectScratchIndexes(home: string, parent: string = os.tmpdir()): GcCollected {
  const prefix = scratchIndexPrefix(home);
  const out: GcCollected = { removed: [], kept: [] };
  for (const { name, dir, inside } of ownTempFolders(parent, prefix)) {
    const pid = scratchIndexPid(name, prefix);
    if (pid === null || isAlive(pid)) continue;
    if (!inside.every((n) => INDEX_FILES.has(n))) continue;
    recordRemoval(out, 'scratch_index', dir, removeTree(dir, { inside: parent }));
  }
  return out;
}

export const scratchIndexGc: GcStep = {
  name: 'throwaway indexes',
  collect: (ctx) => Promise.resolve(collectScratchIndexes(ctx.store.home)),
};
