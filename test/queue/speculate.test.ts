import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { listQueue, queueLand } from '../../src/queue/operations.js';
import { processQueue } from '../../src/queue/processor.js';
import { readMounts } from '../../src/system/mounts.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { makeRepo, runCli, tmpDir, type TestRepo } from '../helpers/repo.js';
import { landedSubjects, project, taskWith } from '../helpers/queue.js';

/**
 * The speculative merge queue (land.speculate): the next batch is integrated on top of the one
 * in its gate and gated at once. What lands is always exactly what passed: a speculative pass
 * on top of a batch that then failed is thrown away, and its entries gated again on the real
 * base — here, where they fail.
 */

type Ev = { seq: number; kind: string; taskId: string | null; data: Record<string, unknown> };
/** The project's events of these kinds, oldest first. */
function events(ctx: ProjectContext, ...kinds: string[]): Ev[] {
  return kinds
    .flatMap((k) => ctx.store.projectEvents(ctx.key, k, 1000) as unknown as Ev[])
    .sort((a, b) => a.seq - b.seq);
}

/**
 * `bad` adds breaks.txt and provides.txt; `needy` adds needs.txt. The gate fails on bad alone
 * (breaks.txt without needs.txt) and on needy alone (needs.txt without provides.txt), and passes
 * on needy on top of bad. Bad's run ends only once the run on top of it has ended, so the
 * speculative run always finishes, and passes, on a predecessor that fails.
 */
const NEEDY_GATE = [
  'marks=$1',
  'if [ -e breaks.txt ] && [ ! -e needs.txt ]; then',
  '  i=0; while [ ! -e "$marks/ahead-done" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done',
  '  echo "FAIL breaks.txt without needs.txt"; exit 1',
  'fi',
  'if [ -e needs.txt ] && [ ! -e provides.txt ]; then echo "FAIL needs.txt without provides.txt"; exit 1; fi',
  'if [ -e needs.txt ]; then touch "$marks/ahead-done"; fi',
  'exit 0',
  '',
].join('\n');

async function needyRepo(): Promise<{ repo: TestRepo; marks: string; before: string }> {
  const marks = tmpDir();
  const repo = makeRepo({
    files: {
      'gate.sh': NEEDY_GATE,
      'warren.yaml': `land: { batch: 1, speculate: 1 }\nverify:\n  - { id: gate, run: "sh gate.sh ${marks}" }\n`,
    },
  });
  await taskWith(repo, 'bad', { 'breaks.txt': 'x\n', 'provides.txt': 'x\n' });
  await taskWith(repo, 'needy', { 'needs.txt': 'x\n' });
  return { repo, marks, before: repo.git('rev-parse', 'main') };
}

/** The base passes the gate: what landed is what passed. */
function basePasses(repo: TestRepo, marks: string): void {
  execFileSync('sh', ['gate.sh', marks], { cwd: repo.root, stdio: 'ignore' });
}

describe('the speculative merge queue', () => {
  it(
    'lands exactly what passed: a speculative pass on top of a batch that then failed is thrown away, and the entry is gated again on the real base (where it fails)',
    { timeout: 240_000 },
    async () => {
      const { repo, marks, before } = await needyRepo();
      const ctx = await project(repo);
      await queueLand(ctx, 'bad', { wait: false });
      await queueLand(ctx, 'needy', { wait: false });
      const worked = await processQueue(ctx);
      const states = Object.fromEntries(listQueue(ctx).entries.map((e) => [e.id, e.state]));
      expect(states).toEqual({ bad: 'bounced', needy: 'bounced' });
      expect(repo.git('rev-parse', 'main')).toBe(before);
      expect(fs.existsSync(path.join(repo.root, 'needs.txt'))).toBe(false);
      basePasses(repo, marks);
      const gates = events(ctx, 'queue.gate')
        .map((e) => e.data)
        .sort((a, b) => Number(a.run) - Number(b.run));
      // bad (fails); needy on top of bad, at once (passes: thrown away); needy on the base (fails).
      expect(gates.map((g) => [g.tasks, g.onTopOf ?? null, g.passed])).toEqual(
        expect.arrayContaining([
          [['bad'], null, false],
          [['needy'], ['bad'], true],
          [['needy'], null, false],
        ]),
      );
      expect(worked.gateRuns).toBe(3);
      const discarded = events(ctx, 'queue.discarded');
      expect(discarded.map((e) => e.data.tasks)).toEqual([['needy']]);
      expect(listQueue(ctx).entries.find((e) => e.id === 'needy')).toMatchObject({ code: 'GATE_FAILED' });
    },
  );

  it(
    'a speculative pass on top of a batch that landed lands without running again; speculate: 0 gates one batch at a time',
    { timeout: 240_000 },
    async () => {
      for (const speculate of [1, 0]) {
        const repo = makeRepo({
          files: {
            'warren.yaml': `land: { batch: 1, speculate: ${speculate} }\nverify:\n  - { id: gate, run: "! test -e culprit.txt" }\n`,
          },
        });
        for (const id of ['a', 'b', 'c']) await taskWith(repo, id, { [`${id}.txt`]: `${id}\n` });
        const ctx = await project(repo);
        const before = repo.git('rev-parse', 'main');
        for (const id of ['a', 'b', 'c']) await queueLand(ctx, id, { wait: false });
        const worked = await processQueue(ctx);
        expect(landedSubjects(repo, before)).toEqual(["a's work", "b's work", "c's work"]);
        expect(worked.gateRuns).toBe(3);
        const ahead = events(ctx, 'queue.speculative');
        const onTopOf = events(ctx, 'queue.gate').map((e) => e.data.onTopOf ?? null);
        if (speculate === 1) {
          expect(ahead.map((e) => [e.data.tasks, e.data.onTopOf])).toEqual(
            expect.arrayContaining([
              [['b'], ['a']],
              [['c'], ['b']],
            ]),
          );
          expect(onTopOf.filter((o) => o !== null)).toHaveLength(2);
        } else {
          expect(ahead).toEqual([]);
          expect(onTopOf).toEqual([null, null, null]);
        }
        expect(events(ctx, 'queue.discarded')).toEqual([]);
        expect(repo.git('status', '--porcelain')).toBe('');
      }
    },
  );

  it(
    'an entry that joins while a batch is being bisected is gated before the bisection is over, on top of its last part',
    { timeout: 300_000 },
    async () => {
      // Every gate run after the first waits until the test says go, once `late` has joined: it
      // joins while the batch that failed is being bisected, whatever the machine's speed.
      const marks = tmpDir();
      const go = path.join(marks, 'go');
      const runs = path.join(marks, 'runs');
      fs.mkdirSync(runs);
      const gate = `n=$(ls ${runs} | wc -l); mktemp -p ${runs} >/dev/null; if [ $n -ge 1 ]; then i=0; while [ ! -e ${go} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; fi; ! test -e culprit.txt`;
      const repo = makeRepo({
        files: { 'warren.yaml': `land: { speculate: 1 }\nverify:\n  - { id: gate, run: "${gate}" }\n` },
      });
      for (const id of ['q1', 'bad', 'q2', 'q3', 'late'])
        await taskWith(repo, id, id === 'bad' ? { 'culprit.txt': 'x\n' } : { [`${id}.txt`]: `${id}\n` });
      const ctx = await project(repo);
      for (const id of ['q1', 'bad', 'q2', 'q3']) await queueLand(ctx, id, { wait: false });
      const working = processQueue(ctx);
      // The batch's first run has failed: it is being bisected.
      for (let i = 0; i < 2400; i++) {
        if (events(ctx, 'queue.gate').some((e) => e.data.passed === false)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await queueLand(ctx, 'late', { wait: false });
      fs.writeFileSync(go, '');
      await working;
      const states = Object.fromEntries(listQueue(ctx).entries.map((e) => [e.id, e.state]));
      expect(states).toEqual({ q1: 'landed', bad: 'bounced', q2: 'landed', q3: 'landed', late: 'landed' });
      const all = events(ctx, 'queue.speculative', 'queue.gate', 'task.landed', 'land.bounced');
      const lateGated = Math.min(
        ...all
          .filter(
            (e) =>
              (e.kind === 'queue.speculative' || e.kind === 'queue.gate') &&
              (e.data.tasks as string[]).includes('late'),
          )
          .map((e) => e.seq),
      );
      const bisected = Math.max(
        ...all
          .filter(
            (e) =>
              (e.kind === 'task.landed' || e.kind === 'land.bounced') &&
              ['q1', 'bad', 'q2', 'q3'].includes(e.taskId ?? ''),
          )
          .map((e) => e.seq),
      );
      expect(lateGated).toBeLessThan(bisected);
      expect(repo.git('status', '--porcelain')).toBe('');
    },
  );

  it(
    'holds across a crash: a processor killed once a speculative run on top of a failing batch passed lands nothing untested; the next one gates it again on the base',
    { timeout: 240_000 },
    async () => {
      const { repo, marks, before } = await needyRepo();
      const ctx = await project(repo);
      await queueLand(ctx, 'bad', { wait: false });
      await queueLand(ctx, 'needy', { wait: false });
      const killed = await runCli(['land', 'needy'], {
        cwd: repo.root,
        home: repo.home,
        env: { WARREN_FAULT: 'queue:speculated' },
      });
      expect(killed.code, killed.stderr).not.toBe(0);
      expect(killed.code).not.toBe(1);
      expect(repo.git('rev-parse', 'main')).toBe(before);
      const again = await repo.warren('land', 'needy');
      expect(again.code, again.stderr).toBe(1);
      expect(again.stderr).toContain('bounced from the merge queue');
      const states = Object.fromEntries(listQueue(ctx).entries.map((e) => [e.id, e.state]));
      expect(states).toEqual({ bad: 'bounced', needy: 'bounced' });
      expect(repo.git('rev-parse', 'main')).toBe(before);
      basePasses(repo, marks);
      expect(readMounts().filter((m) => m.mountPoint.startsWith(repo.home))).toEqual([]);
      expect(repo.git('status', '--porcelain')).toBe('');
    },
  );
});
