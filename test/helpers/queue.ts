import fs from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { checkpointTask } from '../../src/land/checkpoint.js';
import { listQueue, queueLand } from '../../src/queue/operations.js';
import { processQueue } from '../../src/queue/processor.js';
import { createTask } from '../../src/workspace/create.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { gitIn, makeRepo, type TestRepo } from './repo.js';

/** Helpers for the merge queue's library tests: a project in this process, a task with a commit, what landed. */

/** The repository as a project of this process (its store closed when the test ends). */
export async function project(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

/** A task whose workspace gets `files` (folders made), checkpointed as "ID's work"; its path. */
export async function taskWith(repo: TestRepo, id: string, files: Record<string, string>): Promise<string> {
  // In process, as the library does it (two CLI processes per task were most of a queue test's time).
  const ctx = await project(repo);
  const task = await createTask(ctx, { type: 'feat', id });
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(task.path, rel)), { recursive: true });
    fs.writeFileSync(path.join(task.path, rel), content);
  }
  await checkpointTask(ctx, id, { message: `${id}'s work` });
  return task.path;
}

/** The subjects of the commits main gained since `since`, oldest first. */
export function landedSubjects(repo: TestRepo, since: string): string[] {
  return gitIn(repo.root, 'log', '--reverse', '--format=%s', `${since}..main`).split('\n').filter(Boolean);
}

/**
 * Tasks in `order`, each with a file of its own (`bad`: culprit.txt, which the test's gate fails
 * on), landed in turn without waiting, then one processor working the queue through — and
 * `during`, when given, beside it (to tell the gate's shell what the queue has recorded).
 */
export async function landBatch(
  order: readonly string[],
  warrenYaml: string,
  during?: (ctx: ProjectContext, over: () => boolean) => Promise<void>,
) {
  const repo = makeRepo({ files: { 'warren.yaml': warrenYaml } });
  for (const id of order)
    await taskWith(repo, id, id === 'bad' ? { 'culprit.txt': 'breaks the gate\n' } : { [`${id}.txt`]: `${id}\n` });
  const ctx = await project(repo);
  const before = gitIn(repo.root, 'rev-parse', 'main');
  for (const id of order) await queueLand(ctx, id, { wait: false });
  let over = false;
  const working = processQueue(ctx).finally(() => {
    over = true;
  });
  const [worked] = await Promise.all([working, during?.(ctx, () => over)]);
  return { repo, ctx, before, worked, entries: listQueue(ctx).entries };
}

/**
 * A shell fragment for a gate: its run on the failing half of a bisection (the tree with
 * culprit.txt and `half`'s file, without `after`'s) waits (at most a minute) until
 * tellProbeRecorded says the queue has recorded the verdict of the probe (that half's first half,
 * gated at the same time). The probe's verdict is then there when the half's is, whatever the
 * machine's load; were it still running, the queue would speculate on it meanwhile (one more run).
 */
export function waitForProbe(marks: string, half: string, after: string): string {
  return `if test -e culprit.txt && test -e ${half}.txt && ! test -e ${after}.txt; then i=0; while ! test -e ${marks}/probe.recorded && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; fi`;
}

/** landBatch's `during`: once the gate's verdict on `probe` alone is recorded, says so to waitForProbe. */
export function tellProbeRecorded(marks: string, probe: readonly string[]) {
  return async (ctx: ProjectContext, over: () => boolean): Promise<void> => {
    const recorded = () =>
      (ctx.store.projectEvents(ctx.key, 'queue.gate', 100) as unknown as { data: { tasks: string[] } }[]).some(
        (e) => e.data.tasks.join(' ') === probe.join(' '),
      );
    while (!over() && !recorded()) await new Promise((r) => setTimeout(r, 20));
    fs.writeFileSync(path.join(marks, 'probe.recorded'), '');
  };
}
