import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { projectIntents } from '../../src/state/intents.js';
import { openProjectWith, type ProjectContext } from '../../src/workspace/context.js';
import { BARE_LIFECYCLE } from '../../src/workspace/types.js';
import { faultPoints, recoverInterrupted, runOperation } from '../../src/workspace/operation.js';
import { TOY, type ToyData } from '../fixtures/toy-operation.mjs';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * The operation runner (src/workspace/operation.ts) on a toy operation of four steps, each
 * writing one file: the first two undone when it fails (back), the last two finished when it is
 * cut off after them (forward). Crashes are real: a child process runs the operation with the
 * built runner and is killed — at every fault point of the declaration, and at random instants
 * inside the steps — and the repair must leave all four files or none.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const FILES = ['a', 'b', 'c', 'd'];

async function open(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  const ctx = await openProjectWith(repo.root, { lifecycle: BARE_LIFECYCLE, store });
  return ctx;
}

function toyDir(): string {
  return tmpDir('warren-toy-');
}

function present(dir: string): string[] {
  return FILES.filter((f) => fs.existsSync(path.join(dir, f)));
}

function log(dir: string): string[] {
  const file = path.join(dir, 'log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n') : [];
}

function run(ctx: ProjectContext, data: ToyData): Promise<unknown> {
  return runOperation(ctx, TOY, null, data as never, {} as never);
}

/** Runs the toy operation in a child process with the built runner; `onGo` sees it reach the runner. */
function runChild(
  repo: TestRepo,
  data: ToyData,
  env: Record<string, string>,
  onGo?: (kill: () => void) => void,
): Promise<NodeJS.Signals | null> {
  const script = `
    const { openProjectWith } = await import(${JSON.stringify(path.join(ROOT, 'dist/workspace/context.js'))});
    const { BARE_LIFECYCLE } = await import(${JSON.stringify(path.join(ROOT, 'dist/workspace/types.js'))});
    const { openStore } = await import(${JSON.stringify(path.join(ROOT, 'dist/composition.js'))});
    const { runOperation } = await import(${JSON.stringify(path.join(ROOT, 'dist/workspace/operation.js'))});
    const { TOY } = await import(${JSON.stringify(path.join(ROOT, 'test/fixtures/toy-operation.mjs'))});
    const ctx = await openProjectWith(process.cwd(), { lifecycle: BARE_LIFECYCLE, store: openStore() });
    process.stdout.write('go\\n');
    await runOperation(ctx, TOY, null, ${JSON.stringify(data)}, {});
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: repo.root,
      env: { ...process.env, WARREN_HOME: repo.home, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('go')) onGo?.(() => child.kill('SIGKILL'));
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve(signal));
  });
}

describe('the operation runner', () => {
  it('runs the steps in order, records each, and leaves no intent behind', async () => {
    const repo = makeRepo();
    const ctx = await open(repo);
    const dir = toyDir();
    const done = (await run(ctx, { dir })) as Record<string, unknown>;
    expect(present(dir)).toEqual(FILES);
    expect(log(dir)).toEqual(['run a', 'run b', 'run c', 'run d']);
    // Each step's patch is on the payload it returns.
    expect(done).toMatchObject({ dir, aAt: 0, bAt: 1, cAt: 2, dAt: 3 });
    expect(projectIntents(ctx.store, ctx.key)).toEqual([]);
    ctx.store.close();
  });

  it('a step that fails undoes itself and every step before it, in reverse, and says what it undid', async () => {
    const repo = makeRepo();
    const ctx = await open(repo);
    const dir = toyDir();
    await expect(run(ctx, { dir, failAt: 'b' })).rejects.toThrow('failing at b; undone: b deleted, a deleted');
    expect(present(dir)).toEqual([]);
    expect(log(dir)).toEqual(['run a', 'run b', 'undo b cut', 'undo a finished']);
    expect(projectIntents(ctx.store, ctx.key)).toEqual([]);
    ctx.store.close();
  });

  it('an undo that cannot be done stops the undoing there, and the failure says so', async () => {
    const repo = makeRepo();
    const ctx = await open(repo);
    const dir = toyDir();
    await expect(run(ctx, { dir, failAt: 'b', stuckAt: 'b' })).rejects.toThrow('undone: (cannot undo b)');
    // a was never undone: what could not be undone is a state of its own, for scan and gc.
    expect(present(dir)).toEqual(['a', 'b']);
    expect(log(dir)).toEqual(['run a', 'run b', 'undo b cut']);
    expect(projectIntents(ctx.store, ctx.key)).toEqual([]);
    ctx.store.close();
  });

  it('a step past the point of no return that fails is not undone: its error stands', async () => {
    const repo = makeRepo();
    const ctx = await open(repo);
    const dir = toyDir();
    await expect(run(ctx, { dir, failAt: 'c' })).rejects.toThrow(/^failing at c$/);
    expect(present(dir)).toEqual(['a', 'b', 'c']);
    expect(log(dir)).toEqual(['run a', 'run b', 'run c']);
    expect(projectIntents(ctx.store, ctx.key)).toEqual([]);
    ctx.store.close();
  });

  it.each(faultPoints(TOY, BARE_LIFECYCLE))(
    'killed at %s, the next command settles it: all four files or none, and the intent gone',
    async (point) => {
      const repo = makeRepo();
      const dir = toyDir();
      const signal = await runChild(repo, { dir }, { WARREN_FAULT: `toy:${point}` });
      expect(signal).toBe('SIGKILL');
      const ctx = await open(repo);
      const [repaired] = await recoverInterrupted(ctx, { toy: TOY });
      const reached = ['begun', 'a-written', 'b-written', 'c-written', 'd-written'].indexOf(point);
      // Killed before c was recorded done: rolled back. After: finished.
      expect(present(dir)).toEqual(reached < 2 ? [] : FILES);
      expect(repaired?.outcome).toBe(
        reached === 0
          ? 'nothing-to-do'
          : reached < 2
            ? 'rolled-back'
            : reached < 4
              ? 'rolled-forward'
              : 'nothing-to-do',
      );
      expect(projectIntents(ctx.store, ctx.key)).toEqual([]);
      ctx.store.close();
    },
  );

  it('killed at random instants inside its steps, every repair leaves all four files or none', async () => {
    const repo = makeRepo();
    for (let round = 0; round < 12; round++) {
      const dir = toyDir();
      // Spread over the ~80 ms the steps take (four pauses of 10 ms on each side), each a little at random.
      const delay = round * 8 + Math.floor(Math.random() * 8);
      const signal = await runChild(repo, { dir, pauseMs: 10 }, {}, (kill) => setTimeout(kill, delay));
      const ctx = await open(repo);
      const [repaired] = await recoverInterrupted(ctx, { toy: TOY });
      const files = present(dir);
      expect([[], FILES], `round ${round}: killed ${delay} ms in (${signal}), left ${files.join(',')}`).toContainEqual(
        files,
      );
      expect(projectIntents(ctx.store, ctx.key), `round ${round}: ${repaired?.message ?? 'no repair'}`).toEqual([]);
      ctx.store.close();
    }
  });
});
