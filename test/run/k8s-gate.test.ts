import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordedClaims } from '../../src/run/k8s/ledger.js';
import { unavailable } from '../helpers/capabilities.js';
import { claimNames, clusterForFile, eventsOf } from '../helpers/k8s-cluster.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * The merge queue's gate of a batch holding a task in a cluster runs in a claim of that cluster
 * (src/queue/gate-k8s.ts), against the loopback API server of test/helpers/k8s-server.ts.
 */
const noPodman = unavailable(import.meta.filename, 'podman');

const cluster = clusterForFile(noPodman);

/** The install leaves `.installed` (ignored: only a setup run in the gate's own sandbox makes it there). */
function clusterRepo(verify: string, more = ''): TestRepo {
  const repo = makeRepo({
    files: {
      'README.md': '# main\n',
      '.gitignore': '.installed\ndeps/\n',
      'warren.yaml': `runner: k8s:loop\n${more}setup:\n  - { id: install, run: 'echo installed > .installed', gate: install }\nverify:\n${verify}`,
    },
  });
  fs.mkdirSync(repo.home, { recursive: true });
  fs.writeFileSync(
    path.join(repo.home, 'config.yaml'),
    `clusters:\n  loop:\n    kubeconfig: ${cluster().kubeconfig}\n    namespace: default\n    replicas: 1\n`,
  );
  return repo;
}

/** A process's state letter (`T`: stopped), from /proc; null once it is gone. */
function processState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) || null;
  } catch {
    return null;
  }
}

type Claim = { metadata: { name: string; labels?: Record<string, string> } };
/** The gate claims the API server was asked for, and those it still has. */
const gateClaimsMade = (): string[] =>
  cluster()
    .created.filter((c) => c.plural === 'sandboxclaims')
    .map((c) => c.body as Claim)
    .filter((b) => b.metadata.labels?.['warren.dev/task']?.startsWith('queue-'))
    .map((b) => b.metadata.name);
async function taskWithWork(repo: TestRepo, id: string): Promise<void> {
  const made = await repo.warren('new', 'feat', id);
  expect(made.code, made.stderr).toBe(0);
  expect((await repo.warren('exec', id, '--', 'sh', '-c', `echo ${id} > ${id}.txt`)).code).toBe(0);
  expect((await repo.warren('checkpoint', id, '-m', `work of ${id}`)).code).toBe(0);
}

describe.skipIf(noPodman !== null)('the gate of a batch with a task in a cluster (loopback API server)', () => {
  it(
    'runs in a claim of its own in that cluster: its setup and steps in the pod, the claim deleted after the verdict',
    { timeout: 300_000 },
    async () => {
      // Passes only in a sandbox of the cluster (its clone is /work/task) whose own setup ran there.
      const repo = clusterRepo(
        `  - { id: in-pod, run: 'test "$(pwd)" = /work/task && test -f .installed && test ! -e deps && echo gated-in-pod' }\n`,
        'provision:\n  - { path: deps, mode: copy }\n',
      );
      // A provisioned folder of this machine: not given to the gate's sandbox, and said.
      fs.mkdirSync(path.join(repo.root, 'deps'));
      fs.writeFileSync(path.join(repo.root, 'deps', 'x'), 'x\n');
      await taskWithWork(repo, 'g');
      const before = new Set(gateClaimsMade());
      const landed = await repo.warren('land', 'g');
      expect(landed.code, `${landed.stdout}\n${landed.stderr}`).toBe(0);
      expect(`${landed.stdout}${landed.stderr}`).toContain('a claim of cluster loop');
      expect(repo.git('show', 'main:g.txt')).toBe('g');
      const made = gateClaimsMade().filter((n) => !before.has(n));
      expect(made).toHaveLength(1);
      expect(claimNames(cluster())).not.toContain(made[0]); // deleted after the verdict
      expect(recordedClaims(repo.home).filter((c) => c.gate)).toEqual([]); // and its record
      const gate = eventsOf(repo.home, 'queue.gate').at(-1);
      expect(gate?.data).toMatchObject({ passed: true, sandbox: 'k8s:loop', cluster: 'loop', snapshots: [] });
      expect(fs.readFileSync(String(gate?.data.log), 'utf8')).toContain('gated-in-pod');
      expect(fs.readFileSync(String(gate?.data.setupLog), 'utf8')).toContain('setup install');
      expect(eventsOf(repo.home, 'queue.gate_deps').at(-1)?.message).toContain(
        "provisioned path(s) deps are this machine's and are not given to its sandbox",
      );
      const removed = await repo.warren('rm', 'g');
      expect(removed.code, removed.stderr).toBe(0);
    },
  );

  it(
    'a step that fails in the claim bounces the task, its output readable here; the claim is deleted',
    { timeout: 300_000 },
    async () => {
      const repo = clusterRepo(`  - { id: broken, run: 'echo "failing in $(pwd)"; exit 3' }\n`);
      await taskWithWork(repo, 'f');
      const before = new Set(gateClaimsMade());
      const landed = await repo.warren('land', 'f');
      expect(landed.code).not.toBe(0);
      expect(() => repo.git('show', 'main:f.txt')).toThrow();
      const bounced = eventsOf(repo.home, 'land.bounced').at(-1);
      expect(String(bounced?.data.reason)).toContain('the gate failed on f');
      expect(String(bounced?.data.reason)).toContain('broken (exit 3)');
      expect(fs.readFileSync(String(bounced?.data.log), 'utf8')).toContain('failing in /work/task');
      const made = gateClaimsMade().filter((n) => !before.has(n));
      expect(made).toHaveLength(1);
      expect(claimNames(cluster())).not.toContain(made[0]);
      expect((await repo.warren('rm', 'f', '--discard')).code).toBe(0);
    },
  );

  it(
    'a gate claim is left by gc while its warren lives, and deleted by gc once that warren was killed',
    { timeout: 300_000 },
    async () => {
      const repo = clusterRepo(`  - { id: ok, run: 'true' }\n`);
      await taskWithWork(repo, 'k');
      // Stopped once the gate's claim is made and holds the integrated commit: a gate still running.
      const child = spawn('node', [path.resolve('bin/warren.js'), 'land', 'k'], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home, WARREN_FAULT: 'queue:gate-claimed:SIGSTOP' },
        stdio: 'ignore',
      });
      const closed = new Promise<string | null>((resolve) => child.on('close', (_, signal) => resolve(signal)));
      for (let state = processState(child.pid ?? 0); state !== 'T'; state = processState(child.pid ?? 0)) {
        expect(state === null || state === 'Z', 'land ended before its gate claimed a sandbox').toBe(false);
        await new Promise((r) => setTimeout(r, 100));
      }
      const left = recordedClaims(repo.home).filter((c) => c.gate);
      expect(left).toHaveLength(1);
      const claim = left[0]?.claim ?? '';
      expect(claimNames(cluster())).toContain(claim);
      const whileRunning = await repo.warren('gc');
      expect(whileRunning.code, whileRunning.stderr).toBe(0);
      expect(claimNames(cluster())).toContain(claim);
      // Killed: its claim is a stray now.
      child.kill('SIGKILL');
      expect(await closed).toBe('SIGKILL');
      const gc = await repo.warren('gc');
      expect(gc.code, gc.stderr).toBe(0);
      expect(claimNames(cluster())).not.toContain(claim);
      expect(recordedClaims(repo.home).filter((c) => c.gate)).toEqual([]);
      expect((await repo.warren('rm', 'k', '--discard')).code).toBe(0);
    },
  );

  it.skipIf(unavailable(import.meta.filename, 'redis') !== null)(
    "warren.yaml's redis and run services are the gate's own, started in its pod and gone with its claim",
    { timeout: 300_000 },
    async () => {
      // Passes only in the gate's pod, against its own redis (its port, in the pod's processes) and web server.
      const check = [
        'test "$(pwd)" = /work/task',
        'test "$(redis-cli -u "$REDIS_URL" ping 2>/dev/null)" = PONG',
        'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done | grep -q -- "--port $WARREN_SERVICE_CACHE_PORT"',
        'node -e "fetch(process.env.WARREN_SERVICE_WEB_URL).then((r) => r.text()).then(console.log)"',
      ].join(' && ');
      const repo = clusterRepo(
        `  - { id: services, run: '${check.replace(/'/g, "''")}' }\n`,
        "services:\n  web: { run: 'node gate-web.js', ready: { port: true } }\n  cache: { kind: redis }\n",
      );
      repo.write(
        'gate-web.js',
        "require('http').createServer((q, s) => s.end('gate web')).listen(Number(process.env.PORT));\n",
      );
      repo.commit('the web service');
      await taskWithWork(repo, 's');
      const before = new Set(gateClaimsMade());
      const landed = await repo.warren('land', 's');
      expect(landed.code, `${landed.stdout}\n${landed.stderr}`).toBe(0);
      const made = gateClaimsMade().filter((n) => !before.has(n));
      expect(made).toHaveLength(1);
      expect(claimNames(cluster())).not.toContain(made[0]);
      expect(eventsOf(repo.home, 'queue.gate_here')).toEqual([]);
      const gate = eventsOf(repo.home, 'queue.gate').at(-1);
      expect(gate?.data).toMatchObject({ passed: true, sandbox: 'k8s:loop' });
      expect(fs.readFileSync(String(gate?.data.log), 'utf8')).toContain('gate web');
      // Nothing of the gate's services is left here.
      const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
      const left = fs.readdirSync(path.join(repo.home, 'services', project)).filter((n) => n.startsWith('queue-'));
      expect(left).toEqual([]);
      expect((await repo.warren('rm', 's')).code).toBe(0);
    },
  );
});
