import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimPlace } from '../../src/run/k8s/ledger.js';
import { unavailable } from '../helpers/capabilities.js';
import { claimedSince, claimsSent, clusterForFile } from '../helpers/k8s-cluster.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * `new --runner k8s:NAME`: one task in a cluster while warren.yaml says nothing of runners (the
 * cluster declared only in config.yaml), against the loopback API server of the tests.
 */
const noPodman = unavailable(import.meta.filename, 'podman');

const cluster = clusterForFile(noPodman);

function repoWithCluster(): TestRepo {
  const repo = makeRepo({ files: { 'README.md': '# main\n' } });
  fs.mkdirSync(repo.home, { recursive: true });
  fs.writeFileSync(
    path.join(repo.home, 'config.yaml'),
    `clusters:\n  loop:\n    kubeconfig: ${cluster().kubeconfig}\n    namespace: default\n    replicas: 1\n`,
  );
  return repo;
}

const claims = (): string[] =>
  cluster()
    .objects('sandboxclaims')
    .map((c) => c.metadata.name);

describe.skipIf(noPodman !== null)('new --runner k8s:NAME', () => {
  it(
    'one task runs in the cluster, the next (no --runner) here; rm deletes the claim',
    { timeout: 300_000 },
    async () => {
      const repo = repoWithCluster();
      const made = await repo.warren('new', 'feat', 'k', '--runner', 'k8s:loop');
      expect(made.code, made.stderr).toBe(0);
      const there = await repo.warren('exec', 'k', '--', 'sh', '-c', 'cat /proc/1/comm; pwd');
      expect(there.code, there.stderr).toBe(0);
      expect(there.stdout).toBe('perl\n/work/task\n');
      const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
      const { name } = claimPlace(repo.home, project, 'k');
      expect(claims()).toContain(name);
      expect((await repo.warren('audit', 'k')).stdout).toContain('cluster loop');

      expect((await repo.warren('new', 'feat', 'h')).code).toBe(0);
      const here = await repo.warren('exec', 'h', '--', 'pwd');
      expect(here.stdout.trim()).not.toBe('/work/task');

      expect((await repo.warren('rm', 'k')).code).toBe(0);
      expect(claims()).not.toContain(name);
      expect((await repo.warren('rm', 'h')).code).toBe(0);
    },
  );

  it('an undeclared cluster: RUNNER_UNAVAILABLE, exit 2, nothing made', async () => {
    const repo = repoWithCluster();
    const r = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'x', '--runner', 'k8s:nowhere');
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('RUNNER_UNAVAILABLE');
    expect(fs.existsSync(path.join(repo.home, 'worktrees'))).toBe(false);
    const bad = await repo.warrenJson<{ error: { code: string } }>('new', 'feat', 'y', '--runner', 'k8s:Upper');
    expect(bad.code).toBe(2);
    expect(bad.json.error.code).toBe('USAGE');
  });
});

describe.skipIf(noPodman !== null)(
  "a task in a cluster and warren.yaml's postgres service, in a pod that runs as root",
  () => {
    it(
      'new fails cleanly: PostgreSQL refuses root, the pod may not change its user; said, with what to do; the task undone and its claim deleted',
      { timeout: 300_000 },
      async () => {
        // The loopback cluster's pods run as root with no capability (warren's template as it is):
        // the server in the pod cannot be started (test/run/k8s-postgres.test.ts: pods of a user of their own).
        const repo = makeRepo({
          files: {
            'warren.yaml': 'runner: k8s:loop\nservices:\n  web: { run: "exec sleep 300" }\n  db: { kind: postgres }\n',
          },
        });
        fs.mkdirSync(repo.home, { recursive: true });
        fs.writeFileSync(
          path.join(repo.home, 'config.yaml'),
          `clusters:\n  loop:\n    kubeconfig: ${cluster().kubeconfig}\n    namespace: default\n    replicas: 1\n`,
        );
        const before = claimsSent(cluster());
        const r = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>('new', 'feat', 's');
        expect(r.code).toBe(1);
        expect(r.json.error.code, r.json.error.message).toBe('CREATE_FAILED');
        expect(r.json.error.message).toContain('PostgreSQL refuses to run as root');
        expect(r.json.error.message).toContain('no CAP_SETUID');
        expect(r.json.error.hint).toContain('runAsUser');
        expect(r.json.error.hint).toContain('--runner local');
        expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
        expect(repo.git('branch', '--list', 'feat/s')).toBe('');
        const claimed = claimedSince(cluster(), before);
        expect(claimed).toHaveLength(1);
        expect(claims()).not.toContain(claimed[0]);
      },
    );
  },
);
