import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listQueue, queueLand } from '../../src/queue/operations.js';
import { processQueue } from '../../src/queue/processor.js';
import { makeRepo, tmpDir } from '../helpers/repo.js';
import { landBatch, landedSubjects, project, taskWith, tellProbeRecorded, waitForProbe } from '../helpers/queue.js';

/**
 * Where the land's time goes in a bisection (issue 41): a half of a failing batch has its own
 * first half gated on the same base at the same time (the probe), so the next step's verdict is
 * there whichever way the half goes; and lands that joined while the batch was being integrated
 * are in the batch, not left to a later part.
 */

/** Each gate run writes when it started and ended under `marks` (mktemp: each run is in a PID namespace of its own). */
function markingGate(marks: string): string {
  const gate = `f=$(mktemp -p ${marks}); date +%s%N > $f.start; sleep 1.5; date +%s%N > $f.end; ! test -e culprit.txt`;
  return `verify:\n  - { id: no-culprit, run: "${gate}" }\n`;
}

/**
 * markingGate, whose run of p1 alone waits (at most a minute) until a run of p1 and p2 without
 * the culprit has started: two runs at once, whatever the machine's load, if the queue starts both.
 */
function waitingGate(marks: string): string {
  const spec = `test -e p1.txt && test -e p2.txt && ! test -e culprit.txt && touch $f.spec`;
  const front = `if test -e p1.txt && ! test -e p2.txt && ! test -e culprit.txt; then i=0; while ! ls ${marks}/*.spec >/dev/null 2>&1 && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; fi`;
  const gate = `f=$(mktemp -p ${marks}); date +%s%N > $f.start; ${spec}; ${front}; sleep 1.5; date +%s%N > $f.end; ! test -e culprit.txt`;
  return `verify:\n  - { id: no-culprit, run: "${gate}" }\n`;
}

/**
 * markingGate, whose run of the failing half (the tree with culprit.txt and `half`'s file, not
 * `after`'s) waits until the queue has recorded its probe's verdict (tellProbeRecorded).
 */
function probeFirstGate(half: string, after: string) {
  return (marks: string): string => {
    const gate = `f=$(mktemp -p ${marks}); date +%s%N > $f.start; sleep 1.5; ${waitForProbe(marks, half, after)}; date +%s%N > $f.end; ! test -e culprit.txt`;
    return `verify:\n  - { id: no-culprit, run: "${gate}" }\n`;
  };
}

/** The gate runs that overlapped in time, as pairs. */
function overlaps(marks: string): number {
  const runs = fs
    .readdirSync(marks)
    .filter((f) => f.endsWith('.start'))
    .map((f) => [f, f.replace(/start$/, 'end')].map((m) => Number(fs.readFileSync(path.join(marks, m), 'utf8'))));
  return runs.flatMap((a, i) => runs.slice(i + 1).filter((b) => a[0]! < b[1]! && b[0]! < a[1]!)).length;
}

/** Tasks in `order` (the one named `bad` breaks the gate), each landed in turn, then the queue worked through. */
async function landInOrder(
  order: readonly string[],
  gate: (marks: string) => string = markingGate,
  probe?: readonly string[],
) {
  const marks = tmpDir();
  const { repo, ctx, before, worked, entries } = await landBatch(
    order,
    gate(marks),
    probe && tellProbeRecorded(marks, probe),
  );
  const states = Object.fromEntries(entries.map((e) => [e.id, e.state]));
  return { marks, repo, ctx, before, worked, states };
}

describe('bisecting a failing batch', () => {
  it(
    "gates a half's first half at the same time as the half: the culprit first of 4 is found in 3 gate times, the others land in queue order",
    { timeout: 240_000 },
    async () => {
      const { marks, repo, ctx, before, worked, states } = await landInOrder(
        ['bad', 'w1', 'w2', 'w3'],
        probeFirstGate('w1', 'w2'),
        ['bad'],
      );
      expect(states).toEqual({ bad: 'bounced', w1: 'landed', w2: 'landed', w3: 'landed' });
      expect(landedSubjects(repo, before)).toEqual(["w1's work", "w2's work", "w3's work"]);
      // The batch (fails); bad + w1 (fails) and, at the same time, bad alone (fails: bounced with
      // its own log); w1 + w2 + w3 (passes). Four runs, two of them at once: three gate times where
      // one half after the other took four.
      expect(worked.gateRuns).toBe(4);
      expect(overlaps(marks)).toBe(1);
      expect(listQueue(ctx).entries.find((e) => e.id === 'bad')).toMatchObject({ code: 'GATE_FAILED' });
      expect(repo.git('status', '--porcelain')).toBe('');
      // Each integration workspace was removed (after its verdict, while the queue went on).
      expect(fs.readdirSync(ctx.root).filter((f) => f.startsWith('.queue-'))).toEqual([]);
    },
  );

  it(
    'a probe that passed lands on the commits it gated: the culprit second of 4 costs no run of its own',
    { timeout: 240_000 },
    async () => {
      const { marks, repo, before, worked, states } = await landInOrder(
        ['q1', 'bad', 'q2', 'q3'],
        probeFirstGate('q1', 'q2'),
        ['q1'],
      );
      expect(states).toEqual({ q1: 'landed', bad: 'bounced', q2: 'landed', q3: 'landed' });
      expect(landedSubjects(repo, before)).toEqual(["q1's work", "q2's work", "q3's work"]);
      // The batch (fails); q1 + bad (fails) with q1 alone (passes, lands) at once; bad on top of q1
      // is what the second run failed on: bounced without a run; q2 + q3 (passes).
      expect(worked.gateRuns).toBe(4);
      expect(overlaps(marks)).toBe(1);
    },
  );

  it(
    'the entry alone in its gate, the one after it a known failure on top of it: the rest is gated on it at once, without the culprit',
    { timeout: 240_000 },
    async () => {
      const { marks, repo, ctx, before, worked, states } = await landInOrder(
        ['p1', 'bad', 'p2', 'p3', 'p4', 'p5'],
        waitingGate,
      );
      expect(states).toEqual({ p1: 'landed', bad: 'bounced', p2: 'landed', p3: 'landed', p4: 'landed', p5: 'landed' });
      expect(landedSubjects(repo, before)).toEqual(["p1's work", "p2's work", "p3's work", "p4's work", "p5's work"]);
      // The batch (fails); p1 + bad + p2 (fails) with p1 + bad (fails) at once; then p1 alone
      // (passes) and, at the same time, p2…p5 on top of p1 without bad — whose integration on p1
      // the gate failed on, so that p1 landing bounces it without a run. Five runs in three gate
      // times where the rest after p1 was a fourth. (p1's run waits for the other to start.)
      expect(worked.gateRuns).toBe(5);
      expect(overlaps(marks)).toBe(2);
      const spec = ctx.store.projectEvents(ctx.key, 'queue.speculative', 100) as unknown as {
        data: { tasks: string[]; onTopOf: string[]; leftOut?: string[] };
      }[];
      expect(spec.map((e) => e.data)).toEqual([
        expect.objectContaining({ tasks: ['p2', 'p3', 'p4', 'p5'], onTopOf: ['p1'], leftOut: ['bad'] }),
      ]);
      expect(ctx.store.projectEvents(ctx.key, 'queue.discarded', 100)).toEqual([]);
      expect(repo.git('status', '--porcelain')).toBe('');
      expect(repo.git('ls-tree', '--name-only', 'main')).not.toContain('culprit.txt');
    },
  );

  it(
    'takes into the batch the lands that joined while it was being integrated (one gate run for all, not a second part)',
    { timeout: 240_000 },
    async () => {
      const repo = makeRepo({ files: { 'warren.yaml': 'verify:\n  - { id: ok, run: "true" }\n' } });
      const first = ['a1', 'a2', 'a3', 'a4', 'a5'];
      for (const id of [...first, 'late']) await taskWith(repo, id, { [`${id}.txt`]: `${id}\n` });
      const ctx = await project(repo);
      for (const id of first) await queueLand(ctx, id, { wait: false });
      const working = processQueue(ctx);
      // `late` joins once the batch is being integrated (a1 is squashed; the others are being
      // squashed onto it), holding no marker by the time the batch looks for more.
      const state = (id: string) => listQueue(ctx).entries.find((e) => e.id === id)?.state;
      while (state('a1') !== 'testing') await new Promise((r) => setTimeout(r, 2));
      await queueLand(await project(repo), 'late', { wait: false });
      const worked = await working;
      expect(Object.values(Object.fromEntries(listQueue(ctx).entries.map((e) => [e.id, e.state])))).toEqual(
        Array(6).fill('landed'),
      );
      const gates = ctx.store.projectEvents(ctx.key, 'queue.gate', 100) as unknown as { data: { tasks: string[] } }[];
      expect(gates.map((g) => g.data.tasks.length)).toEqual([6]);
      expect(worked.gateRuns).toBe(1);
    },
  );
});
