import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimPlace } from '../../src/run/k8s/ledger.js';
import { unavailable } from '../helpers/capabilities.js';
import { clusterForFile } from '../helpers/k8s-cluster.js';
import { gitIn, makeRepo, runWarren, type TestRepo } from '../helpers/repo.js';

/**
 * `runner: k8s:NAME` (src/run/k8s/): one SandboxClaim per task against warren's warm pool, each
 * command exec'd in the claimed pod through the API server, the branch sent in and the work
 * brought back as git bundles. No cluster runs here: the API server is test/helpers/k8s-server.ts,
 * which validates what warren creates against the agent-sandbox CRDs' own schemas and whose
 * sandboxes are podman containers (docs/design/runners.md says what that leaves untested). The
 * merge queue's gate of such a task, in a claim of its own: test/run/k8s-gate.test.ts.
 */
const noPodman = unavailable(import.meta.filename, 'podman');

const cluster = clusterForFile(noPodman);

function clusterRepo(files: Record<string, string> = {}, yaml = 'runner: k8s:loop\n'): TestRepo {
  const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': yaml, ...files } });
  fs.mkdirSync(repo.home, { recursive: true });
  fs.writeFileSync(
    path.join(repo.home, 'config.yaml'),
    `clusters:\n  loop:\n    kubeconfig: ${cluster().kubeconfig}\n    namespace: default\n    runtimeClass: gvisor\n    replicas: 1\n`,
  );
  return repo;
}

function claimOf(repo: TestRepo, task: string): { name: string; dir: string } {
  const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
  return claimPlace(repo.home, project, task);
}

/**
 * bin/warren.js as a process of its own, awaited: the API server lives in this process, so a
 * synchronous spawn would stop it answering.
 */
function warrenProcess(
  repo: TestRepo,
  args: string[],
  opts: { input?: string; env?: Record<string, string> } = {},
): Promise<{ status: number | null; signal: string | null; stdout: string; stderr: string }> {
  const child = spawn('node', [path.resolve('bin/warren.js'), ...args], {
    cwd: repo.root,
    env: { ...process.env, WARREN_HOME: repo.home, ...opts.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(opts.input ?? '');
  return new Promise((resolve) => child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr })));
}

const claims = (): string[] =>
  cluster()
    .objects('sandboxclaims')
    .map((c) => c.metadata.name);

describe.skipIf(noPodman !== null)('a task in a Kubernetes cluster (loopback API server)', () => {
  it(
    'new → exec → checkpoint → land → rm: commands run in the claimed pod, their work comes back checked, rm deletes the claim',
    { timeout: 300_000 },
    async () => {
      const repo = clusterRepo();
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
      expect(made.code, made.stderr).toBe(0);
      const ws = made.json.path;
      const first = await repo.warren(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        'cat /proc/1/comm; pwd; git log --format=%s -1; echo to-err >&2; exit 7',
      );
      expect(first.code, first.stderr).toBe(7);
      expect(first.stdout).toBe('perl\n/work/task\ninitial\n'); // the pod's own init, its clone of the branch
      expect(first.stderr).toContain('to-err');
      const { name, dir } = claimOf(repo, 'a');
      expect(claims()).toContain(name);
      // Standard input reaches the command; a file written there comes back to the workspace.
      const piped = await warrenProcess(repo, ['exec', 'a', '--', 'sh', '-c', 'cat > from-pod.txt; echo wrote'], {
        input: 'hello from stdin\n',
      });
      expect(piped.status, piped.stderr).toBe(0);
      expect(piped.stdout).toBe('wrote\n');
      expect(fs.readFileSync(path.join(ws, 'from-pod.txt'), 'utf8')).toBe('hello from stdin\n');
      // A commit made in the sandbox moves the task's branch once brought back.
      const committed = await repo.warren(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        'echo one > one.txt && git add one.txt && git -c user.name=a -c user.email=a@x commit -qm "one in the pod"',
      );
      expect(committed.code, committed.stderr).toBe(0);
      expect(gitIn(ws, 'log', '--format=%s', '-1')).toBe('one in the pod');
      expect(fs.readFileSync(path.join(ws, 'one.txt'), 'utf8')).toBe('one\n');
      // checkpoint commits the brought-back file here; the next command sees that commit in the pod.
      const cp = await repo.warren('checkpoint', 'a', '-m', 'from the pod');
      expect(cp.code, cp.stderr).toBe(0);
      const after = await repo.warren('exec', 'a', '--', 'sh', '-c', 'git log --format=%s -1; git status --porcelain');
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).toBe('from the pod\n');
      const show = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a');
      expect(show.json.events.filter((e) => e.kind === 'runner.claimed')).toHaveLength(1);
      const audit = await repo.warren('audit', 'a');
      expect(audit.stdout).toContain(`cluster loop`);
      const landed = await repo.warren('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(fs.readFileSync(path.join(repo.root, 'from-pod.txt'), 'utf8')).toBe('hello from stdin\n');
      const removed = await repo.warren('rm', 'a');
      expect(removed.code, removed.stderr).toBe(0);
      expect(claims()).not.toContain(name);
      expect(fs.existsSync(dir)).toBe(false);
    },
  );

  it(
    'no claim carries env or volumes (a cold start); a bad claim is refused by the schema',
    { timeout: 300_000 },
    async () => {
      const repo = clusterRepo();
      expect((await repo.warren('new', 'feat', 's')).code).toBe(0);
      expect((await repo.warren('exec', 's', '--', 'true')).code).toBe(0);
      const sent = cluster().created.filter((c) => c.plural === 'sandboxclaims');
      expect(sent.length).toBeGreaterThan(0);
      for (const c of sent) {
        const spec = (c.body as { spec: Record<string, unknown> }).spec;
        expect(Object.keys(spec)).toEqual(['warmPoolRef']);
      }
      // The server refuses what a real one would: a claim without warmPoolRef, a bad shutdownPolicy.
      const post = (body: unknown) =>
        fetch(`${cluster().url}/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/default/sandboxclaims`, {
          method: 'POST',
          body: JSON.stringify(body),
        });
      const bad = await post({
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxClaim',
        metadata: { name: 'bad' },
        spec: {},
      });
      expect(bad.status).toBe(422);
      expect(JSON.stringify(await bad.json())).toContain('warmPoolRef');
      const worse = await post({
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxClaim',
        metadata: { name: 'worse' },
        spec: { warmPoolRef: { name: 'warren' }, lifecycle: { shutdownPolicy: 'Never' } },
      });
      expect(worse.status).toBe(422);
      // warren's own template and pool, as sent, passed the same schemas (else no claim would exist).
      const template = cluster().created.find((c) => c.plural === 'sandboxtemplates')?.body as {
        spec: { podTemplate: { spec: { runtimeClassName?: string; containers: { env?: unknown }[] } } };
      };
      expect(template.spec.podTemplate.spec.runtimeClassName).toBe('gvisor');
      expect(template.spec.podTemplate.spec.containers[0]?.env).toBeUndefined();
    },
  );

  it(
    'work that does not descend from what was sent, or touches a protected path, is refused: the branch stays',
    { timeout: 300_000 },
    async () => {
      const repo = clusterRepo({}, 'runner: k8s:loop\nprotected: [".env*"]\n');
      const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'p');
      expect(made.code, made.stderr).toBe(0);
      const before = gitIn(made.json.path, 'rev-parse', 'HEAD');
      const r = await repo.warren(
        'exec',
        'p',
        '--',
        'sh',
        '-c',
        'echo S=1 > .env.local && git add -f .env.local && git -c user.name=a -c user.email=a@x commit -qm secret',
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('was not brought back');
      expect(r.stderr).toContain('.env.local');
      expect(gitIn(made.json.path, 'rev-parse', 'HEAD')).toBe(before);
      const orphan = await repo.warren(
        'exec',
        'p',
        '--',
        'sh',
        '-c',
        'git reset -q --hard HEAD~1 && git checkout -q --orphan x && git -c user.name=a -c user.email=a@x commit -qm rewritten --allow-empty',
      );
      expect(orphan.code).toBe(1);
      expect(orphan.stderr).toContain('do not descend');
      expect(gitIn(made.json.path, 'rev-parse', 'HEAD')).toBe(before);
      const rmP = await repo.warren('rm', 'p', '--discard');
      expect(rmP.code, rmP.stderr).toBe(0);
    },
  );

  it(
    'a crash between the ledger and the claim leaves nothing that gc does not clear',
    { timeout: 300_000 },
    async () => {
      const repo = clusterRepo();
      // Killed right after the record is written, before the claim is asked for: `new` (its setup-less first command is the exec).
      const made = await repo.warren('new', 'feat', 'c');
      expect(made.code, made.stderr).toBe(0);
      const crashed = await warrenProcess(repo, ['exec', 'c', '--', 'true'], {
        env: { WARREN_FAULT: 'k8s:claim-recorded' },
      });
      expect(crashed.signal).toBe('SIGKILL');
      const { name, dir } = claimOf(repo, 'c');
      expect(fs.existsSync(path.join(dir, 'claim.json'))).toBe(true);
      expect(claims()).not.toContain(name);
      // The next command claims it after all; then the task's row goes (a crash of rm) and gc deletes the claim.
      const again = await repo.warren('exec', 'c', '--', 'true');
      expect(again.code, again.stderr).toBe(0);
      expect(claims()).toContain(name);
      const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
      const ghost = claimPlace(repo.home, project, 'ghost');
      fs.mkdirSync(ghost.dir, { recursive: true });
      fs.writeFileSync(
        path.join(ghost.dir, 'claim.json'),
        JSON.stringify({
          cluster: 'loop',
          claim: ghost.name,
          project,
          task: 'ghost',
          createdAt: '',
          sentHead: null,
          broughtTree: null,
        }),
      );
      const gc = await repo.warren('gc');
      expect(gc.code, gc.stderr).toBe(0);
      expect(fs.existsSync(ghost.dir)).toBe(false);
      expect(claims()).toContain(name); // a live task's claim stays
      const rmC = await repo.warren('rm', 'c', '--discard');
      expect(rmC.code, rmC.stderr).toBe(0);
      expect(claims()).not.toContain(name);
    },
  );

  it(
    'an agent that gave its final result in its pod and does not exit is ended after its grace, as here (the marker asked for in the pod)',
    { timeout: 300_000 },
    async () => {
      // It marks its final result (as Claude Code's Stop hook does), then waits on a child for 10 minutes.
      const repo = clusterRepo(
        { 'linger.sh': 'echo "final answer"\ntouch "$WARREN_AGENT_DONE"\nsleep 600\n' },
        'runner: k8s:loop\nagents:\n  lingering: { command: [sh, linger.sh], prompt: stdin, leftover_grace: 1s }\n',
      );
      expect((await repo.warren('new', 'feat', 'l')).code).toBe(0);
      const ran = await repo.warrenJson<{
        exitCode: number;
        timedOut: boolean;
        reason: string;
        log: string;
      }>('run', 'l', '--agent', 'lingering', '--prompt', 'do it', '--timeout', '4m');
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.json).toMatchObject({ exitCode: 0, timedOut: false });
      expect(ran.json.reason).toBe('lingering gave its final result but had not exited 1s later; warren ended it');
      expect(fs.readFileSync(ran.json.log, 'utf8')).toContain('final answer');
      // The run's processes in the pod ended with it: nothing of it is left there.
      const left = await repo.warren(
        'exec',
        'l',
        '--',
        'sh',
        '-c',
        'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done | grep -c "^sleep 600" || true',
      );
      expect(left.stdout.trim()).toBe('0');
      expect((await repo.warren('rm', 'l', '--discard')).code).toBe(0);
    },
  );

  it('new refuses a cluster config.yaml does not declare (exit 2, nothing made)', async () => {
    const repo = clusterRepo({}, 'runner: k8s:nowhere\n');
    const r = await runWarren(['new', 'feat', 'x'], { cwd: repo.root, home: repo.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('does not declare');
    expect(fs.existsSync(path.join(repo.home, 'worktrees'))).toBe(false);
  });
});
