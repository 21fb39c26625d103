import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import { DEFAULT_CONFIG } from '../../src/config/load.js';
import { gatePlace } from '../../src/queue/gate-place.js';
import type { Task } from '../../src/state/types.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { unavailable } from '../helpers/capabilities.js';
import { runCli, tmpDir } from '../helpers/repo.js';
import { startSshHost, waitFor, type SshHost } from '../helpers/ssh-host.js';

/**
 * The merge queue's gate of a batch whose strictest task runs on an SSH host runs on that host
 * (src/queue/gate-place.ts, gate-host.ts; the host's side src/cli/ssh-host-gate.ts): the host is
 * a second local user behind sshd on 127.0.0.1 (test/helpers/ssh-host.ts).
 */
const noSshd = unavailable(import.meta.filename, 'sshd');
const USER = 'warrenssh-g';

/** The gate's one step: says who runs it, and passes only as the host's user and without culprit.txt. */
const WARREN_YAML = [
  'verify:',
  `  - { id: on-host, run: 'echo "gate ran as $(id -un)"; test "$(id -un)" = ${USER} && ! test -e culprit.txt' }`,
  '',
].join('\n');

let host: SshHost;

describe.skipIf(noSshd !== null)("the gate of an SSH task's batch", () => {
  beforeAll(async () => {
    host = await startSshHost(USER);
  }, 120_000);

  afterAll(() => host?.stop());

  it(
    'runs on its host: a step that passes only there lands the task; a failing one bounces it with its log here; nothing is left there',
    { timeout: 400_000 },
    async () => {
      const repo = host.hostRepo({ 'warren.yaml': WARREN_YAML });
      const store = openStore(repo.home);
      onTestFinished(() => store.close());
      const gates = async () => {
        const ctx = await openProject(repo.root, { store });
        return ctx.store.eventsSince(0).flatMap((e) => (e.kind === 'queue.gate' ? [e] : []));
      };

      // (a) A gate step that passes only as the host's user: the task lands.
      expect((await repo.warren('new', 'feat', 'a', '--runner', 'ssh:box')).code).toBe(0);
      const work = await repo.warren('exec', 'a', '--', 'sh', '-c', 'echo a > a.txt; git add a.txt; git commit -qm a');
      expect(work.code, work.stderr).toBe(0);
      const landed = await repo.warren('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(repo.git('show', 'main:a.txt')).toBe('a');
      expect(landed.stderr).toContain('on host box, sandbox none');
      const [passed] = await gates();
      expect(passed?.data).toMatchObject({ passed: true, host: 'box', sandbox: 'none', tasks: ['a'] });
      expect(passed?.message).toContain('on host box, sandbox none');
      // Its log is here, where a gate's log goes, and says where it ran.
      expect(passed?.data.log && fs.readFileSync(passed.data.log, 'utf8')).toContain(`gate ran as ${USER}`);
      expect(passed?.data.log?.startsWith(path.join(repo.home, 'logs'))).toBe(true);

      // (b) A step that fails there: the task bounces, main as it was, the failing output readable here.
      expect((await repo.warren('new', 'feat', 'b', '--runner', 'ssh:box')).code).toBe(0);
      const bad = await repo.warren(
        'exec',
        'b',
        '--',
        'sh',
        '-c',
        'echo x > culprit.txt; git add culprit.txt; git commit -qm b',
      );
      expect(bad.code, bad.stderr).toBe(0);
      const before = repo.git('rev-parse', 'main');
      const bounced = await repo.warren('land', 'b');
      expect(bounced.code).not.toBe(0);
      expect(bounced.stderr).toContain('on-host');
      expect(repo.git('rev-parse', 'main')).toBe(before);
      const failed = (await gates()).at(-1);
      expect(failed?.data).toMatchObject({ passed: false, host: 'box', tasks: ['b'] });
      const log = failed?.data.log ? fs.readFileSync(failed.data.log, 'utf8') : '';
      expect(log).toContain('### verify on-host');
      expect(log).toContain(`gate ran as ${USER}`);

      // (c) Nothing of either gate is left on the host: no integration workspace, no gate ref, no ledger row.
      const home = host.remoteHome(repo);
      expect(host.asHost(`find ${home}/worktrees -maxdepth 2 -name '.queue-*'`).out).toBe('');
      expect(host.asHost(`cd ${home}/remote/*/repo && git for-each-ref refs/warren/gate`).out).toBe('');
      expect(
        host.asHost(`cd ${home}/remote/*/repo && git worktree list --porcelain | grep -c queue- || true`).out,
      ).toBe('0');
    },
  );

  it(
    'a connection lost during the gate there is a gate that could not run: nothing lands, the task bounces with why; the next gate lands it and nothing is left',
    { timeout: 400_000 },
    async () => {
      // The step says it has started, then waits for the test's word (a folder both users can write).
      const signal = fs.mkdtempSync('/tmp/warren-sshgate-');
      fs.chmodSync(signal, 0o777);
      onTestFinished(() => fs.rmSync(signal, { recursive: true, force: true }));
      const started = path.join(signal, 'started');
      const go = path.join(signal, 'go');
      const waits = `touch ${started}; i=0; while [ ! -e ${go} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; test -e ${go}`;
      const repo = host.hostRepo({ 'warren.yaml': `verify:\n  - { id: waits, run: '${waits}' }\n` });
      expect((await repo.warren('new', 'feat', 'c', '--runner', 'ssh:box')).code).toBe(0);
      const work = await repo.warren('exec', 'c', '--', 'sh', '-c', 'echo c > c.txt; git add c.txt; git commit -qm c');
      expect(work.code, work.stderr).toBe(0);
      const before = repo.git('rev-parse', 'main');

      // A process of its own: its connection to the host is cut while the gate runs there.
      const landing = runCli(['land', 'c'], { cwd: repo.root, home: repo.home });
      await waitFor(() => fs.existsSync(started));
      expect(fs.existsSync(started)).toBe(true);
      const master = host.masterPid(repo);
      expect(master).not.toBeNull();
      process.kill(master!, 'SIGKILL');
      fs.writeFileSync(go, '');
      const cut = await landing;
      expect(cut.code, cut.stderr).toBe(1);
      expect(cut.stderr).toContain('the gate on host box could not run');
      expect(repo.git('rev-parse', 'main')).toBe(before);
      const queue = await repo.warrenJson<{ id: string; state: string; code: string | null }[]>('queue');
      expect(queue.json).toEqual([expect.objectContaining({ id: 'c', state: 'bounced', code: 'REMOTE_FAILED' })]);

      // Landed again: the gate there runs (after the cut one ended, or collecting what it left), and passes.
      const again = await runCli(['land', 'c'], { cwd: repo.root, home: repo.home });
      expect(again.code, again.stderr).toBe(0);
      expect(repo.git('show', 'main:c.txt')).toBe('c');
      const home = host.remoteHome(repo);
      expect(host.asHost(`find ${home}/worktrees -maxdepth 2 -name '.queue-*'`).out).toBe('');
      expect(host.asHost(`cd ${home}/remote/*/repo && git for-each-ref refs/warren/gate`).out).toBe('');
    },
  );
});

describe('where the gate of a batch runs (gatePlace, on the records)', () => {
  it('on the host of the first task whose own sandbox kind is the strictest; a tie with a task here goes to the host', () => {
    const ctx = {
      config: structuredClone(DEFAULT_CONFIG),
      store: { home: tmpDir() },
      key: 'k',
      user: {},
    } as unknown as ProjectContext;
    const task = (id: string, data: Task['data']): Task =>
      ({ id, data, project: 'k', type: 'feat', branch: `feat/${id}`, path: `/w/${id}` }) as Task;
    const here = task('here', { sandbox: 'none' });
    const there = task('there', { sandbox: 'none', runner: 'ssh:box' });
    const other = task('other', { sandbox: 'none', runner: 'ssh:other' });
    const boxed = task('boxed', { sandbox: 'bwrap' });
    // A batch of one local `sandbox: none` task: here, as before.
    expect(gatePlace(ctx, [here])).toEqual({ where: 'here', sandbox: 'none' });
    // A tie between a task here and one on a host: the host's, the first in the batch's order.
    expect(gatePlace(ctx, [here, there, other])).toEqual({ where: 'ssh', sandbox: 'none', host: 'box', task: 'there' });
    // A stricter task here: here, in its sandbox.
    expect(gatePlace(ctx, [there, boxed])).toEqual({ where: 'here', sandbox: 'bwrap' });
  });
});
