import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ownTempFolders } from '../system/own-temp-folders.js';
import { removeTree } from '../system/remove-tree.js';
import { egressPrefix } from './egress.js';
import type { GcCollected, GcStep } from '../workspace/types.js';
import { recordRemoval } from '../workspace/gc-record.js';

/**
 * The egress proxy's folders (`warren-egress-TAG-*` in the temporary folder, egress.ts) that a
 * warren of this WARREN_HOME killed while its sandboxed run went on left behind (another home's
 * are its own gc's). Only this user's own (its owner, 0700),
 * holding nothing but the proxy's socket, which no proxy answers any more; or nothing at all a
 * minute after it was made (a proxy binds its socket at once). A proxy that answers is a run's.
 */
export async function collectEgressLeftovers(home: string, parent: string = os.tmpdir()): Promise<GcCollected> {
  const out: GcCollected = { removed: [], kept: [] };
  for (const { dir, st, inside } of ownTempFolders(parent, egressPrefix(home))) {
    const dead =
      inside.length === 0
        ? Date.now() - st.mtimeMs > 60_000
        : inside.length === 1 && inside[0] === 'proxy.sock' && (await refused(path.join(dir, 'proxy.sock')));
    if (!dead) continue;
    recordRemoval(out, 'egress_proxy', dir, removeTree(dir, { inside: parent }));
  }
  return out;
}

/** Whether nothing listens on the unix socket (its proxy's process is gone). */
function refused(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(socket);
    c.once('connect', () => {
      c.destroy();
      resolve(false);
    });
    c.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

export const egressGc: GcStep = { name: 'egress proxies', collect: (ctx) => collectEgressLeftovers(ctx.store.home) };
