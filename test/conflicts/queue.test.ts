import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { checkpointTask } from '../../src/land/checkpoint.js';
import { processQueue } from '../../src/queue/processor.js';
import { listQueue, queueLand } from '../../src/queue/operations.js';
import { createTask } from '../../src/workspace/create.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * The merge queue with the conflict map (`land.conflicts`, the default) and without: an entry
 * that does not merge with an earlier one is kept out of its batch, and bounced as soon as that
 * one landed, before any other gate run. Run in process, so the batches are the test's.
 */

async function project(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

async function taskWith(ctx: ProjectContext, id: string, files: Record<string, string>): Promise<void> {
  const task = await createTask(ctx, { type: 'feat', id });
  for (const [rel, content] of Object.entries(files)) fs.writeFileSync(path.join(task.path, rel), content);
  await checkpointTask(ctx, id, { message: `${id}'s work` });
}

/**
 * a, b (conflicting with a), c, d in that order, batches of 2: the entries' fates, the gate runs,
 * and where b's bounce fell. One batch at a time (speculate: 0): with the queue testing ahead,
 * c + d are gated on top of a while b waits, and both ways take 2 runs.
 */
async function run(conflicts: boolean) {
  const repo = makeRepo({
    files: {
      'shared.txt': 'one\n',
      'warren.yaml': `verify:\n  - { id: ok, run: "true" }\nland: { gate: [ok], batch: 2, speculate: 0${conflicts ? '' : ', conflicts: false'} }\n`,
    },
  });
  const ctx = await project(repo);
  await taskWith(ctx, 'a', { 'shared.txt': 'from a\n' });
  await taskWith(ctx, 'b', { 'shared.txt': 'from b\n' });
  await taskWith(ctx, 'c', { 'c.txt': 'c\n' });
  await taskWith(ctx, 'd', { 'd.txt': 'd\n' });
  for (const id of ['a', 'b', 'c', 'd']) await queueLand(ctx, id, { wait: false });
  const worked = await processQueue(ctx);
  const events = ctx.store.eventsSince(0);
  const bounce = events.find((e) => e.kind === 'land.bounced' && e.taskId === 'b');
  const gatesBefore = events.filter((e) => e.kind === 'queue.gate' && e.seq < (bounce?.seq ?? 0)).length;
  return {
    fates: listQueue(ctx).entries.map((e) => [e.id, e.state, e.code]),
    gateRuns: worked.gateRuns,
    gatesBeforeBounce: gatesBefore,
    reason: bounce?.kind === 'land.bounced' ? bounce.data.reason : '',
  };
}

describe('the merge queue and the conflict map', () => {
  it(
    'keeps b out of a batch with a, bounces it right after a lands, before any other gate: one gate run fewer',
    { timeout: 240_000 },
    async () => {
      const withMap = await run(true);
      const without = await run(false);
      const fates = [
        ['a', 'landed', null],
        ['b', 'bounced', 'LAND_CONFLICT'],
        ['c', 'landed', null],
        ['d', 'landed', null],
      ];
      expect(withMap.fates).toEqual(fates);
      expect(without.fates).toEqual(fates);
      expect(withMap.reason).toMatch(/conflicts with a .* in 1 path\(s\): shared\.txt/);
      // With the map: [a, c] gated, b bounced at once, [d] gated. Without: [a] (b waits), [b, c]: b bounces, c gated, [d].
      expect([withMap.gateRuns, withMap.gatesBeforeBounce]).toEqual([2, 1]);
      expect([without.gateRuns, without.gatesBeforeBounce]).toEqual([3, 1]);
    },
  );
});
