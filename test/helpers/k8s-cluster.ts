import { afterAll, beforeAll } from 'vitest';
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
