import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openStore } from '../../src/composition.js';
import { startTestCluster, type K8sServer, type K8sServerOptions } from './k8s-server.js';

/**
 * The loopback cluster of a test file: started before its tests (not when `skip` says podman is
 * missing: its tests are skipped) and closed after them. Returns the server, once started.
 */
export function clusterForFile(skip: string | null, options: K8sServerOptions = {}): () => K8sServer {
  let server: K8sServer | undefined;
  beforeAll(async () => {
    if (skip === null) server = await startTestCluster(options);
  }, 300_000);
  afterAll(async () => {
    await server?.close();
  }, 120_000);
  return () => {
    if (!server) throw new Error('the test cluster is not started (podman is unavailable)');
    return server;
  };
}

/** How many claims warren has sent `server` so far: pass it to `claimedSince` after a command. */
export function claimsSent(server: K8sServer): number {
  return server.created.filter((c) => c.plural === 'sandboxclaims').length;
}

/** The names of the claims warren sent `server` after the first `before` of them. */
export function claimedSince(server: K8sServer, before: number): string[] {
  return server.created
    .filter((c) => c.plural === 'sandboxclaims')
    .slice(before)
    .map((c) => (c.body as { metadata: { name: string } }).metadata.name);
}

/** A command listing every process of a pod, one command line each (an exec's argv). */
export const POD_PROCESSES = ['sh', '-c', 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done'];

/** The names of the claims `server` holds now. */
export function claimNames(server: K8sServer): string[] {
  return server.objects('sandboxclaims').map((c) => c.metadata.name);
}

/** The project folder name of a WARREN_HOME with one project (its worktrees' folder). */
export function projectOf(home: string): string {
  return fs.readdirSync(path.join(home, 'worktrees'))[0] ?? '';
}

/** podman's containers with this name (the loopback cluster's pods). */
export function podmanHas(pod: string): boolean {
  return spawnSync('podman', ['ps', '-aq', '--filter', `name=^${pod}$`], { encoding: 'utf8' }).stdout.trim() !== '';
}

/** The events of `kind` of a WARREN_HOME, oldest first. */
export function eventsOf(home: string, kind: string): { message: string; data: Record<string, unknown> }[] {
  const store = openStore(home);
  try {
    const rows = store.db.prepare('SELECT message, data FROM events WHERE kind = ? ORDER BY seq').all(kind) as {
      message: string;
      data: string;
    }[];
    return rows.map((r) => ({ message: r.message, data: JSON.parse(r.data) as Record<string, unknown> }));
  } finally {
    store.close();
  }
}
