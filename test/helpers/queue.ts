import fs from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { checkpointTask } from '../../src/land/checkpoint.js';
import { createTask } from '../../src/workspace/create.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { gitIn, type TestRepo } from './repo.js';

/** Helpers for the merge queue's library tests: a project in this process, a task with a commit, what landed. */

/** The repository as a project of this process (its store closed when the test ends). */
export async function project(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

/** A task whose workspace gets `files`, checkpointed as "ID's work". */
export async function taskWith(repo: TestRepo, id: string, files: Record<string, string>): Promise<void> {
  const ctx = await project(repo);
  const task = await createTask(ctx, { type: 'feat', id });
  for (const [rel, content] of Object.entries(files)) fs.writeFileSync(path.join(task.path, rel), content);
  await checkpointTask(ctx, id, { message: `${id}'s work` });
}

/** The subjects of the commits main gained since `since`, oldest first. */
export function landedSubjects(repo: TestRepo, since: string): string[] {
  return gitIn(repo.root, 'log', '--reverse', '--format=%s', `${since}..main`).split('\n').filter(Boolean);
}
