import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWarrenError } from '../../src/errors.js';
import { checkpointTask } from '../../src/land/checkpoint.js';
import { queueLand, listQueue, leaveQueue } from '../../src/queue/operations.js';
import { createTask } from '../../src/workspace/create.js';
import { recordMade } from '../../src/workspace/ledger.js';
import { processQueue } from '../../src/queue/processor.js';
import { gitIn, makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';
import { landBatch, landedSubjects, project, taskWith, tellProbeRecorded, waitForProbe } from '../helpers/queue.js';

/**
 * The merge queue: ordered landing on a base that stays green. Batching and bisection run
 * in process (the library), so a test decides what waits together; parallel lands and the
 * command line run as real processes.
 */

const NO_CULPRIT = 'verify:\n  - { id: no-culprit, run: "! test -e culprit.txt" }\n';

/**
 * Tasks that join the queue in `order` and one processor that works it: `bad` adds culprit.txt
 * (which fails NO_CULPRIT), each other task a file of its own.
 */
/** Makes each task with its files, lands them all through the queue at once in that order, and processes it: each entry's state, and the gate runs. */
async function landAll(repo: TestRepo, tasks: Record<string, Record<string, string>>) {
  for (const [id, files] of Object.entries(tasks)) await taskWith(repo, id, files);
  const ctx = await project(repo);
  for (const id of Object.keys(tasks)) await queueLand(ctx, id, { wait: false });
  const worked = await processQueue(ctx);
  return {
    states: Object.fromEntries(listQueue(ctx).entries.map((e) => [e.id, e.state])),
    gateRuns: worked.gateRuns,
  };
}

async function culpritBatch(order: string[], warrenYaml = NO_CULPRIT, during?: Parameters<typeof landBatch>[2]) {
  const { repo, before, worked, entries } = await landBatch(order, warrenYaml, during);
  return {
    gateRuns: worked.gateRuns,
    states: Object.fromEntries(entries.map((e) => [e.id, e.state])),
    bad: entries.find((e) => e.id === 'bad'),
    landed: landedSubjects(repo, before),
  };
}

describe('the merge queue', () => {
  it(
    'lands 12 parallel `warren land`s of disjoint tasks: all of them, one squash commit each, in queue order, the main checkout clean',
    { timeout: 300_000 },
    async () => {
      const repo = makeRepo();
      const ids = Array.from({ length: 12 }, (_, i) => `p${String(i).padStart(2, '0')}`);
      // Made in process (faster); the lands below are 12 real processes at once.
      const ctx = await project(repo);
      for (const id of ids) {
        const task = await createTask(ctx, { type: 'feat', id });
        fs.writeFileSync(path.join(task.path, `${id}.txt`), `${id}\n`);
        await checkpointTask(ctx, id, { message: `${id}'s work` });
      }
      const before = repo.git('rev-parse', 'main');
      const results = await Promise.all(
        ids.map((id) => repo.warrenJson<{ state: string; commit: string; entry: number }>('land', id)),
      );
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      for (const r of results) expect(r.json.state).toBe('landed');
      // One squash commit per task, in the order they joined the queue.
      const order = [...results]
        .sort((a, b) => a.json.entry - b.json.entry)
        .map((r) => `${ids[results.indexOf(r)]}'s work`);
      expect(landedSubjects(repo, before)).toEqual(order);
      expect(repo.git('status', '--porcelain')).toBe('');
      for (const id of ids) expect(fs.readFileSync(path.join(repo.root, `${id}.txt`), 'utf8')).toBe(`${id}\n`);
    },
  );

  it(
    "a semantic conflict: two tasks that each pass the gate alone but break it together — the first lands, the second bounces with the gate's log",
    { timeout: 240_000 },
    async () => {
      // The gate allows one plugin at most: each task adds one.
      const repo = makeRepo({
        files: {
          'plugins/README': 'plugins go here\n',
          'warren.yaml': 'verify:\n  - { id: one-plugin, run: "test $(ls plugins | grep -v README | wc -l) -le 1" }\n',
        },
      });
      await taskWith(repo, 'a', { 'plugins/a.js': 'a\n' });
      await taskWith(repo, 'b', { 'plugins/b.js': 'b\n' });
      const ctx = await project(repo);
      await queueLand(ctx, 'a', { wait: false });
      await queueLand(ctx, 'b', { wait: false });
      const worked = await processQueue(ctx);
      expect(worked.processed).toBe(true);
      const entries = listQueue(ctx).entries;
      expect(entries.map((e) => [e.id, e.state])).toEqual([
        ['a', 'landed'],
        ['b', 'bounced'],
      ]);
      const b = entries[1];
      expect(b?.code).toBe('GATE_FAILED');
      expect(b?.log && fs.existsSync(b.log)).toBeTruthy();
      expect(fs.existsSync(path.join(repo.root, 'plugins', 'a.js'))).toBe(true);
      expect(fs.existsSync(path.join(repo.root, 'plugins', 'b.js'))).toBe(false);
      expect(ctx.store.getTask(ctx.key, 'b')?.state).toBe('ready');
      // Together (run 1) failed, then a alone passed and landed; b on top of a is the tree run 1
      // failed on, so it bounced with run 1's log, without a third run.
      expect(worked.gateRuns).toBe(2);
      expect(repo.git('status', '--porcelain')).toBe('');
    },
  );

  it(
    'bisects a failing batch of 4: the other three land, the culprit bounces, within 2·log2(4)+1 gate runs',
    { timeout: 240_000 },
    async () => {
      // Culprit in the middle of the batch: the batch (fails), q1 + bad (fails) and q1 alone at the
      // same time (passes, lands); bad on top of q1 is what the second run failed on: bounced
      // without gating it again; q2 + q3 (passes). Within 2·log2(4)+1.
      const run = await culpritBatch(['q1', 'bad', 'q2', 'q3']);
      expect(run.states).toEqual({ q1: 'landed', bad: 'bounced', q2: 'landed', q3: 'landed' });
      expect(run.gateRuns).toBe(4);
      expect(run.landed).toEqual(["q1's work", "q2's work", "q3's work"]);
    },
  );

  it(
    'with `land: { parallel: true }`, gates both halves of a failing batch at once: the passing half lands first, the culprit bounces, in three gate times',
    { timeout: 240_000 },
    async () => {
      // Each gate run writes when it started and ended, to see the runs overlap (each run is in a
      // PID namespace of its own: mktemp, not $$; 1.5 s, so that they overlap even when one starts late).
      const marks = tmpDir();
      const gate = `f=$(mktemp -p ${marks}); date +%s%N > $f.start; sleep 1.5; date +%s%N > $f.end; ! test -e culprit.txt`;
      const run = await culpritBatch(
        ['q1', 'bad', 'q2', 'q3'],
        `land: { parallel: true }\nverify:\n  - { id: no-culprit, run: "${gate}" }\n`,
      );
      expect(run.states).toEqual({ q1: 'landed', bad: 'bounced', q2: 'landed', q3: 'landed' });
      // The batch (fails); q1 + bad (fails) and q2 + q3 (passes, lands) at once; on top of them
      // q1 + bad is the batch's failed tree again, so split at once: q1 (passes, lands) and bad
      // (fails) at once. Five runs in three gate times; the half that passed landed first.
      expect(run.gateRuns).toBe(5);
      expect(run.landed).toEqual(["q2's work", "q3's work", "q1's work"]);
      const runs = fs
        .readdirSync(marks)
        .filter((f) => f.endsWith('.start'))
        .map((f) => [f, f.replace(/start$/, 'end')].map((m) => Number(fs.readFileSync(path.join(marks, m), 'utf8'))));
      expect(runs).toHaveLength(5);
      const overlapping = runs.flatMap((a, i) => runs.slice(i + 1).filter((b) => a[0]! < b[1]! && b[0]! < a[1]!));
      expect(overlapping).toHaveLength(2);
      expect(run.bad).toMatchObject({ code: 'GATE_FAILED' });
      expect(run.bad?.log && fs.existsSync(run.bad.log)).toBeTruthy();
    },
  );

  it(
    'gates the likely culprit alone first: one whose change the failure names, or whose own verify failed — 2 gate runs for a batch of 6',
    { timeout: 240_000 },
    async () => {
      // The gate's failure names the file that breaks it, as a test runner names the failing test file.
      const repo = makeRepo({
        files: {
          'warren.yaml': [
            'verify:',
            '  - { id: gate, run: "for f in broken-*.txt; do test -e $f && { echo FAIL $f; exit 1; }; done; exit 0" }',
            '',
          ].join('\n'),
        },
      });
      for (const id of ['s1', 's2', 's3', 's5', 's6']) await taskWith(repo, id, { [`${id}.txt`]: `${id}\n` });
      await taskWith(repo, 'bad', { 'broken-bad.txt': 'breaks the gate\n' });
      const ctx = await project(repo);
      for (const id of ['s1', 's2', 's3', 'bad', 's5', 's6']) await queueLand(ctx, id, { wait: false });
      const worked = await processQueue(ctx);
      const states = Object.fromEntries(listQueue(ctx).entries.map((e) => [e.id, e.state]));
      expect(states).toEqual({ s1: 'landed', s2: 'landed', s3: 'landed', bad: 'bounced', s5: 'landed', s6: 'landed' });
      // The batch (fails, naming broken-bad.txt), the five others (pass, land); bad on top of them is
      // the batch's failed tree: it bounces with that run's log, without a third run.
      expect(worked.gateRuns).toBe(2);
      expect(listQueue(ctx).entries.find((e) => e.id === 'bad')).toMatchObject({ code: 'GATE_FAILED' });

      // A task whose own verify failed is the suspect when the failure names nothing.
      repo.write('warren.yaml', 'verify:\n  - { id: gate, run: "! test -e culprit.txt" }\n');
      repo.commit('a quiet gate');
      for (const id of ['u1', 'u2', 'u3']) await taskWith(repo, id, { [`${id}.txt`]: `${id}\n` });
      await taskWith(repo, 'quiet', { 'culprit.txt': 'breaks the gate\n' });
      expect((await repo.warren('verify', 'quiet')).code).toBe(1);
      const ctx2 = await project(repo);
      for (const id of ['u1', 'quiet', 'u2', 'u3']) await queueLand(ctx2, id, { wait: false });
      const again = await processQueue(ctx2);
      const now = Object.fromEntries(listQueue(ctx2).entries.map((e) => [e.id, e.state]));
      expect(now).toMatchObject({ u1: 'landed', quiet: 'bounced', u2: 'landed', u3: 'landed' });
      expect(again.gateRuns).toBe(2);
    },
  );

  it(
    'a task that only adds a passing test file is not suspected beside the real culprit (jest names passing files too): 2 gate runs for a batch of 4',
    { timeout: 240_000 },
    async () => {
      // A gate that reports as jest does: PASS or FAIL per test file, and the failure's stack.
      const gate = [
        'fail=0',
        'for t in test/*.test.js; do',
        '  if [ -e src/broken.js ] && [ "$t" = test/main.test.js ]; then',
        '    echo "FAIL $t"; echo "  ● main › works"; echo "      at works (src/broken.js:1:7)"; fail=1',
        '  else echo "PASS $t"; echo "  ✓ works (2 ms)"; fi',
        'done',
        'echo "Test Suites: $fail failed"',
        'exit $fail',
        '',
      ].join('\n');
      const repo = makeRepo({
        files: {
          'gate.sh': gate,
          'test/main.test.js': 'works\n',
          'warren.yaml': 'verify:\n  - { id: gate, run: "sh gate.sh" }\n',
        },
      });
      const worked = await landAll(repo, {
        s1: { 's1.txt': 's1\n' },
        adds: { 'test/rp-weekday.test.js': 'works\n' },
        bad: { 'src/broken.js': 'throw 1\n' },
        s2: { 's2.txt': 's2\n' },
      });
      expect(worked.states).toEqual({ s1: 'landed', adds: 'landed', bad: 'bounced', s2: 'landed' });
      // The batch (fails: FAIL test/main.test.js at src/broken.js, and PASS test/rp-weekday.test.js);
      // the three others without bad (pass, land); bad on top of them is the failed tree: bounced.
      expect(worked.gateRuns).toBe(2);
    },
  );

  it(
    'a culprit whose failure names only the test file that imports what it changed is gated apart first: 2 gate runs for a batch of 4',
    { timeout: 240_000 },
    async () => {
      // A gate that reports as a test runner does: PASS or FAIL per test file, nothing about the
      // source file the failing test requires (test/m0.test.js requires src/m0.js, which bad breaks).
      const gate = [
        'fail=0',
        'for t in test/*.test.js; do',
        '  if node -e "process.exit(require(require(\'path\').resolve(process.argv[1]))() ? 0 : 1)" "$t"; then echo "PASS $t"; else echo "FAIL $t"; fail=1; fi',
        'done',
        'exit $fail',
        '',
      ].join('\n');
      const repo = makeRepo({
        files: {
          'gate.sh': gate,
          'src/m0.js': 'exports.value = () => 0;\n',
          'test/m0.test.js': "module.exports = () => require('../src/m0.js').value() === 0;\n",
          'warren.yaml': 'verify:\n  - { id: gate, run: "sh gate.sh" }\n',
        },
      });
      const worked = await landAll(repo, {
        s1: { 's1.txt': 's1\n' },
        adds: { 'test/m1.test.js': 'module.exports = () => true;\n' },
        bad: { 'src/m0.js': 'exports.value = () => -1;\n' },
        s2: { 's2.txt': 's2\n' },
      });
      expect(worked.states).toEqual({ s1: 'landed', adds: 'landed', bad: 'bounced', s2: 'landed' });
      // The batch (fails: FAIL test/m0.test.js, which requires src/m0.js: bad's change); the three
      // others without bad (pass, land); bad on top of them is the failed tree: bounced, no third run.
      expect(worked.gateRuns).toBe(2);
    },
  );

  it(
    'splits a second half without gating it again when its integration is the tree that just failed',
    { timeout: 240_000 },
    async () => {
      // Culprit in the second half: the first half passes and lands, and the second half on the new
      // base is exactly what failed — it is split at once, without a run.
      const run = await culpritBatch(['r1', 'r2', 'bad', 'r3']);
      expect(run.states).toEqual({ r1: 'landed', r2: 'landed', bad: 'bounced', r3: 'landed' });
      // The batch (fails), r1 + r2 (passes) with r1 alone probed at the same time (bisect.test.ts),
      // bad alone (fails), r3 alone (passes): 5 runs in 4 gate times.
      expect(run.gateRuns).toBe(5);
    },
  );

  it(
    'once the culprit has bounced, the parts still waiting are gated together, not one by one',
    { timeout: 240_000 },
    async () => {
      // Culprit first: the batch (fails), bad + w1 (fails), bad alone (fails, bounces), then w1,
      // w2 + w3 together (passes): 4 runs, where w1 alone and then w2 + w3 would be 5. (bad + w1's
      // run ends once bad alone's verdict is recorded: the queue does not speculate on it meanwhile.)
      const marks = tmpDir();
      const run = await culpritBatch(
        ['bad', 'w1', 'w2', 'w3'],
        `verify:\n  - { id: no-culprit, run: "${waitForProbe(marks, 'w1', 'w2')}; ! test -e culprit.txt" }\n`,
        tellProbeRecorded(marks, ['bad']),
      );
      expect(run.states).toEqual({ bad: 'bounced', w1: 'landed', w2: 'landed', w3: 'landed' });
      expect(run.gateRuns).toBe(4);
      expect(run.landed).toEqual(["w1's work", "w2's work", "w3's work"]);
    },
  );

  it(
    'a culprit last in its batch: the rest on top of the first half is split at once, and the culprit on top of the rest is the failed batch (3 gate times)',
    {
      timeout: 240_000,
    },
    async () => {
      // The batch (fails), z1 + z2 (passes; z1 alone probed at the same time), z3 (passes); bad on
      // top of them is the batch's tree: bounced with run 1's log. 4 runs in 3 gate times.
      const run = await culpritBatch(['z1', 'z2', 'z3', 'bad']);
      expect(run.states).toEqual({ z1: 'landed', z2: 'landed', z3: 'landed', bad: 'bounced' });
      expect(run.gateRuns).toBe(4);
    },
  );

  it(
    "keeps land's guards inside the queue: hooks changed after joining bounce it; an invalid protected policy refuses before it joins",
    { timeout: 240_000 },
    async () => {
      const repo = makeRepo();
      await taskWith(repo, 'h', { 'h.txt': 'h\n' });
      const ctx = await project(repo);
      await queueLand(ctx, 'h', { wait: false });
      const hook = path.join(repo.root, '.git', 'hooks', 'pre-commit');
      fs.writeFileSync(hook, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      await processQueue(ctx);
      const entry = listQueue(ctx).entries.find((e) => e.id === 'h');
      expect(entry).toMatchObject({ state: 'bounced', code: 'HOOKS_CHANGED' });
      expect(gitIn(repo.root, 'log', '-1', '--format=%s')).toBe('initial');

      // A policy that does not compile refuses at once: nothing joins the queue.
      repo.write('warren.yaml', 'protected: ["[unclosed"]\n');
      repo.commit('bad policy');
      fs.rmSync(hook);
      const refused = await repo.warrenJson<{ error: { code: string } }>('land', 'h');
      expect(refused.code).toBe(1);
      expect(refused.json.error.code).toBe('PROTECTED_POLICY_INVALID');
      expect(listQueue(await project(repo)).entries.filter((e) => e.state === 'queued')).toEqual([]);
    },
  );

  it(
    'removes only the integration workspaces its ledger says it made: a planted .queue-* folder or link is left as it is, and reported',
    { timeout: 120_000 },
    async () => {
      const repo = makeRepo({ files: { 'warren.yaml': 'verify:\n  - { id: ok, run: "true" }\n' } });
      await taskWith(repo, 'g', { 'g.txt': 'g\n' });
      const ctx = await project(repo);
      // What anyone who can write the workspace root can put there: a folder, and a link out (named after task g).
      const planted = path.join(ctx.root, '.queue-something');
      fs.mkdirSync(planted);
      fs.writeFileSync(path.join(planted, 'notes.txt'), 'mine\n');
      const outside = tmpDir('warren-outside-');
      fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep\n');
      const link = path.join(ctx.root, '.queue-g');
      fs.symlinkSync(outside, link);
      // And one a processor that died left: in the ledger, a detached worktree.
      const dead = path.join(ctx.root, '.queue-queue-dead-1');
      recordMade(ctx, dead, 'integration', 'queue-dead-1');
      gitIn(repo.root, 'worktree', 'add', '--detach', dead, 'main');

      await queueLand(ctx, 'g', { wait: false });
      const worked = await processQueue(ctx);
      expect(worked.gateRuns).toBe(1);
      expect(listQueue(ctx).entries.map((e) => e.state)).toEqual(['landed']);

      expect(fs.readFileSync(path.join(planted, 'notes.txt'), 'utf8')).toBe('mine\n');
      expect(fs.readlinkSync(link)).toBe(outside);
      expect(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('keep\n');
      expect(fs.existsSync(dead)).toBe(false);
      expect(gitIn(repo.root, 'worktree', 'list', '--porcelain')).not.toContain('.queue-');
      // The gate's own workspace came and went; the ledger holds none of them any more.
      expect(
        fs
          .readdirSync(ctx.root)
          .filter((n) => n.startsWith('.queue-'))
          .sort(),
      ).toEqual(['.queue-g', '.queue-something']);
      expect(ctx.store.madePaths(ctx.key).filter((m) => m.kind === 'integration')).toEqual([]);
      const reported = ctx.store.eventsSince(0).filter((e) => e.kind === 'queue.foreign');
      expect(reported.map((e) => e.kind === 'queue.foreign' && e.data.path).sort()).toEqual([link, planted]);
      expect(reported.every((e) => e.level === 'warn')).toBe(true);
      expect(reported.find((e) => e.message.includes('.queue-something'))?.message).toBe(
        `${JSON.stringify(planted)} (a folder) is named like a merge-queue integration workspace, but warren's ledger has no record of making it; it was left as it is. If it is not yours, remove it with \`rm -r -- ${planted}\`.`,
      );
    },
  );

  it(
    "a gate that replaces its integration workspace with a link to a task's workspace: the link goes, the task's workspace stays",
    { timeout: 120_000 },
    async () => {
      const repo = makeRepo();
      const victim = await taskWith(repo, 'v', { 'v.txt': 'v\n' });
      fs.writeFileSync(path.join(victim, 'wip.txt'), 'uncommitted\n');
      repo.write(
        'warren.yaml',
        `verify:\n  - { id: swap, run: 'd=$(pwd); cd / && rm -rf "$d" && ln -s ${victim} "$d"' }\n`,
      );
      repo.commit('a gate that swaps its folder');
      await taskWith(repo, 'g', { 'g.txt': 'g\n' });
      const ctx = await project(repo);
      await queueLand(ctx, 'g', { wait: false });
      await processQueue(ctx);
      expect(fs.readFileSync(path.join(victim, 'wip.txt'), 'utf8')).toBe('uncommitted\n');
      expect(gitIn(victim, 'status', '--porcelain')).toBe('?? wip.txt');
      expect(listQueue(ctx).entries.map((e) => [e.id, e.state])).toEqual([['g', 'landed']]);
      expect(fs.readdirSync(ctx.root).filter((n) => n.startsWith('.queue-'))).toEqual([]);
    },
  );

  it(
    'runs the setup steps marked `gate: true` in the integration workspace before the gate, and no other',
    { timeout: 120_000 },
    async () => {
      const repo = makeRepo({
        files: {
          '.gitignore': 'generated.txt\nother.txt\n',
          'warren.yaml': [
            'setup:',
            '  - { id: gen, run: "echo made > generated.txt", gate: true }',
            '  - { id: other, run: "echo made > other.txt" }',
            'verify:',
            '  - { id: needs-gen, run: "test -f generated.txt && ! test -e other.txt" }',
            '',
          ].join('\n'),
        },
      });
      await taskWith(repo, 's', { 's.txt': 's\n' });
      const ctx = await project(repo);
      await queueLand(ctx, 's', { wait: false });
      await processQueue(ctx);
      expect(listQueue(ctx).entries.map((e) => [e.id, e.state, e.reason])).toEqual([['s', 'landed', null]]);
      const gate = ctx.store.eventsSince(0).find((e) => e.kind === 'queue.gate');
      expect(
        gate?.kind === 'queue.gate' && gate.data.setupLog && fs.readFileSync(gate.data.setupLog, 'utf8'),
      ).toContain('### setup gen');
    },
  );

  it(
    'an entry whose only conflict is with an entry ahead that then bounces waits, and lands afterwards; the rest of the batch is not held back',
    { timeout: 240_000 },
    async () => {
      const repo = makeRepo({
        files: {
          'shared.txt': 'one\n',
          'warren.yaml': NO_CULPRIT,
        },
      });
      await taskWith(repo, 'a', { 'shared.txt': 'from a\n', 'culprit.txt': 'breaks the gate\n' });
      await taskWith(repo, 'b', { 'shared.txt': 'from b\n' });
      await taskWith(repo, 'c', { 'c.txt': 'c\n' });
      const ctx = await project(repo);
      for (const id of ['a', 'b', 'c']) await queueLand(ctx, id, { wait: false });
      const worked = await processQueue(ctx);
      const entries = listQueue(ctx).entries;
      expect(entries.map((e) => [e.id, e.state, e.code])).toEqual([
        ['a', 'bounced', 'GATE_FAILED'],
        ['b', 'landed', null],
        ['c', 'landed', null],
      ]);
      expect(fs.readFileSync(path.join(repo.root, 'shared.txt'), 'utf8')).toBe('from b\n');
      const waiting = ctx.store.eventsSince(0).find((e) => e.kind === 'queue.waiting');
      expect(waiting?.message).toBe(
        'b waits: it conflicts with a, ahead of it in the merge queue and not landed yet, in shared.txt; it is planned again once that has landed or bounced',
      );
      // a + c (fails), a alone (fails), then c + b on the base (passes): b, left out of the batch (it
      // does not merge with a), joined behind it while it was bisected (land.speculate), and was
      // gated with c once a had bounced. c was never gated alone for b's sake.
      expect(worked.gateRuns).toBe(3);
    },
  );

  it(
    'an entry that conflicts with what really landed bounces once that landed, naming the task and the paths, said once',
    { timeout: 240_000 },
    async () => {
      const repo = makeRepo({
        files: { 'shared.txt': 'one\n', 'warren.yaml': 'verify:\n  - { id: ok, run: "true" }\n' },
      });
      await taskWith(repo, 'first', { 'shared.txt': 'from first\n' });
      await taskWith(repo, 'second', { 'shared.txt': 'from second\n' });
      const ctx = await project(repo);
      await queueLand(ctx, 'first', { wait: false });
      let err: unknown = null;
      try {
        await queueLand(ctx, 'second');
      } catch (e) {
        err = e;
      }
      expect(listQueue(ctx).entries.map((e) => [e.id, e.state])).toEqual([
        ['first', 'landed'],
        ['second', 'bounced'],
      ]);
      const landed = repo.git('rev-parse', 'main').slice(0, 12);
      expect(isWarrenError(err, 'LAND_CONFLICT')).toBe(true);
      const e = err as Error & { hint?: string };
      expect(e.message).toBe(
        `task second bounced from the merge queue: task second conflicts with first (${landed}), which landed on main since it branched, in 1 path(s): shared.txt. Nothing was landed; the task, its branch and the base are as they were.`,
      );
      expect(e.hint).toBe(
        'Bring main into the task (`warren exec second -- git merge main`), resolve the conflicts, `warren checkpoint second`, then land again.',
      );
    },
  );

  it('lists the queue, leaves it on `queue rm`, and refuses to leave what it is not in', async () => {
    const repo = makeRepo();
    await taskWith(repo, 'w', { 'w.txt': 'w\n' });
    const ctx = await project(repo);
    await queueLand(ctx, 'w', { wait: false });
    // (The library: `warren queue` would start a background warren to work the waiting entry.)
    expect(listQueue(ctx).entries).toEqual([expect.objectContaining({ id: 'w', position: 1, state: 'queued' })]);
    expect(leaveQueue(ctx, 'w')).toEqual({ removed: true, id: 'w' });
    expect(listQueue(ctx).entries.map((e) => e.state)).toEqual(['removed']);
    let err: unknown = null;
    try {
      leaveQueue(ctx, 'w');
    } catch (e) {
      err = e;
    }
    expect(isWarrenError(err, 'TASK_STATE')).toBe(true);
  });
});
