import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/repo.js';
import type { WhereItRuns } from '../../src/run/where-it-runs.js';

/**
 * Where a task runs and what holds it (src/run/where-it-runs.ts), for each runner here: `warren
 * audit`'s "runner" section and `warren show`'s `runner` say the same. (A task on a host over
 * SSH: test/run/ssh-faults.test.ts; the dashboard and MCP: test/views-front-ends.test.ts.)
 */

type Audit = { sections: { name: string; data: unknown }[] };

async function said(repo: TestRepo, id: string): Promise<{ where: WhereItRuns; lines: string[] }> {
  const audit = await repo.warrenJson<Audit>('audit', id);
  expect(audit.code, audit.stderr).toBe(0);
  const section = audit.json.sections.find((s) => s.name === 'runner');
  const shown = await repo.warrenJson<{ runner: WhereItRuns }>('show', id);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.json.runner).toEqual(section?.data);
  const human = (await repo.warren('audit', id)).stdout.split('\n');
  const at = human.indexOf('[runner]');
  expect(at).toBeGreaterThan(-1);
  return { where: section?.data as WhereItRuns, lines: human.slice(at + 1, at + 3) };
}

describe('where a task runs, for each runner', () => {
  it('none, bwrap and container here: the runner, the sandbox and what holds it', { timeout: 120_000 }, async () => {
    const repo = makeRepo();
    // The container task's container is made at `new`: it goes with the test (its folders do).
    onTestFinished(
      () => void spawnSync('podman', ['rm', '-f', '-t', '0', '--filter', `label=warren.home=${repo.home}`]),
    );
    const saidOf: Record<string, Awaited<ReturnType<typeof said>>> = {};
    for (const [id, sandbox] of [
      ['n', 'none'],
      ['b', 'bwrap'],
      ['c', 'container'],
    ] as const) {
      const made = await repo.warren('new', 'feat', id, '--sandbox', sandbox);
      expect(made.code, made.stderr).toBe(0);
      const { where, lines } = (saidOf[id] = await said(repo, id));
      expect(where).toMatchObject({ runner: sandbox, where: 'here', sandbox, name: null, remotePath: null });
      expect(lines[0]).toContain(`runner: here (this machine)`);
      expect(lines[0]).toContain(`[${sandbox}]`);
      expect(lines[1]).toMatch(/^ {2}boundary: on this machine, /);
    }
    // What each said above (asking again is three more commands a task, audit twice).
    expect(saidOf.n?.lines[1]).toContain('unsandboxed');
    expect(saidOf.b?.lines[1]).toContain('bwrap: no capability');
    expect(saidOf.c?.where.handle).toMatch(/^warren-[0-9a-f]{16}$/);
    expect(saidOf.c?.lines[1]).toContain('podman container');
  });

  it('k8s:NAME: the cluster, its namespace and the claim', { timeout: 120_000 }, async () => {
    const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': 'runner: k8s:lab\n' } });
    fs.mkdirSync(repo.home, { recursive: true });
    fs.writeFileSync(
      path.join(repo.home, 'config.yaml'),
      `clusters:\n  lab:\n    kubeconfig: ${path.join(repo.home, 'no-kubeconfig')}\n    namespace: agents\n`,
    );
    // No setup: nothing runs at `new`, so the cluster (which does not exist) is not asked.
    const made = await repo.warren('new', 'feat', 'k');
    expect(made.code, made.stderr).toBe(0);
    const { where, lines } = await said(repo, 'k');
    expect(where).toMatchObject({
      runner: 'k8s:lab',
      where: 'cluster',
      sandbox: 'k8s',
      name: 'lab',
      address: 'agents',
    });
    expect(where.handle).toBeTruthy();
    expect(lines[0]).toContain('runner: cluster lab (namespace agents)');
    expect(lines[1]).toContain('nothing of this machine mounted');
  });
});
