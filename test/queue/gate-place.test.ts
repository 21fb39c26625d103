import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeGatePlace, gatePlace } from '../../src/queue/gate-place.js';
import type { Task } from '../../src/state/types.js';
import type { ProjectContext } from '../../src/workspace/context.js';

/** Where a batch's gate runs, over the records alone (src/queue/gate-place.ts); no cluster is asked. */
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-gate-place-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function ctxWith(config: { sandbox?: string; services?: Record<string, unknown> }): ProjectContext {
  return {
    key: 'p',
    store: { home },
    config: { runner: 'local', sandbox: config.sandbox ?? 'none', services: config.services },
  } as unknown as ProjectContext;
}

function task(id: string, data: Task['data']): Task {
  return { id, data } as Task;
}

describe("the gate's place", () => {
  it.each([
    ['tasks here', {}, [task('a', {}), task('b', { sandbox: 'bwrap' })], { where: 'here', sandbox: 'bwrap' }],
    [
      'a task in a cluster: a claim of its cluster',
      {},
      [task('a', { sandbox: 'bwrap' }), task('b', { runner: 'k8s:loop' })],
      { where: 'k8s', sandbox: 'k8s:loop', cluster: 'loop' },
    ],
    [
      'tasks in two clusters: the first one',
      {},
      [task('a', { runner: 'k8s:one' }), task('b', { runner: 'k8s:two' })],
      { where: 'k8s', cluster: 'one' },
    ],
    [
      'a task in a cluster and a postgres service (a server of its own in its pod): a claim of its cluster',
      { services: { db: { kind: 'postgres' }, cache: { kind: 'redis' } } },
      [task('a', { runner: 'k8s:loop' })],
      { where: 'k8s', sandbox: 'k8s:loop', cluster: 'loop' },
    ],
    [
      'a task in a cluster, and redis and run: services (they run in its pod): a claim of its cluster',
      { services: { cache: { kind: 'redis' }, web: { kind: 'run', run: 'node server.js' } } },
      [task('a', { runner: 'k8s:loop' })],
      { where: 'k8s', sandbox: 'k8s:loop', cluster: 'loop' },
    ],
  ] as const)('%s', (_, config, tasks, place) => {
    expect(gatePlace(ctxWith(config), tasks)).toMatchObject(place);
  });

  it('says where it is, and why a cluster was not used', () => {
    const ctx = ctxWith({ services: { db: { kind: 'postgres' } } });
    expect(describeGatePlace(gatePlace(ctx, [task('a', { runner: 'k8s:loop' })]))).toBe('a claim of cluster loop');
    // No service kind keeps a gate out of its cluster today; one that would is said so.
    expect(
      describeGatePlace({ where: 'here', sandbox: 'container', instead: { cluster: 'loop', why: 'its service x' } }),
    ).toBe('sandbox container, not in cluster loop: its service x');
  });
});
