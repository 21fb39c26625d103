import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { containerPlace } from '../../src/run/container/task-container.js';
import { runInTask } from '../../src/run/execute.js';
import { NO_OUTPUT } from '../../src/workspace/reporter.js';
import { requireTask } from '../../src/workspace/tasks.js';
import { project } from '../helpers/queue.js';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, makeRepo, runCli, runWarren, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * `sandbox: container` (src/run/container/): one long-lived podman container per task, each
 * command exec'd in it through podman's API under bin/container-init.pl. The hostile-agent
 * arenas run against it in test/agent-boundary.test.ts; here: what the runner promises.
 */
const noPodman = unavailable(import.meta.filename, 'podman');

function podman(...args: string[]): { code: number; out: string } {
  const r = spawnSync('podman', args, { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}`.trim() };
}

function containerOf(repo: TestRepo, task: string): { name: string; dir: string } {
  const project = fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '';
  return containerPlace(repo.home, project, task);
}

/** Host processes whose command line starts with `needle` (the container's processes are host processes too). */
function hostProcesses(needle: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((p) => {
      try {
        const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' ');
        return cmd.startsWith(needle) ? [`${p} ${cmd}`] : [];
      } catch {
        return [];
      }
    });
}

/** Polls `ok` every 100 ms for up to 60 s (a bound for a loaded machine, not a timing claim). */
async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ok(); i++) await new Promise((res) => setTimeout(res, 100));
}

async function containerTask(
  yaml = 'sandbox: container\n',
  files: Record<string, string> = {},
): Promise<{ repo: TestRepo; ws: string }> {
  const repo = makeRepo({ files: { 'README.md': '# main\n', 'warren.yaml': yaml, ...files } });
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'a');
  expect(made.code, made.stderr).toBe(0);
  onTestFinished(() => {
    podman('rm', '-f', '-t', '0', '--ignore', containerOf(repo, 'a').name);
  });
  return { repo, ws: made.json.path };
}

describe.skipIf(noPodman !== null)('a container task', () => {
  it(
    'runs each command in its one container: exit status, standard input, stdout and stderr apart, recorded as container',
    { timeout: 180_000 },
    async () => {
      const { repo, ws } = await containerTask();
      const first = await repo.warren(
        'exec',
        'a',
        '--',
        'sh',
        '-c',
        'cat /proc/1/comm; grep CapEff /proc/self/status; echo to-err >&2; exit 7',
      );
      expect(first.code).toBe(7);
      expect(first.stdout).toMatch(/^perl\n/); // the container's own init, not the host's
      expect(first.stdout).toMatch(/CapEff:\s+0+\n/);
      expect(first.stderr).toContain('to-err');
      expect(first.stdout).not.toContain('to-err');
      const { name } = containerOf(repo, 'a');
      const id = podman('container', 'inspect', '--format', '{{.Id}}', name).out;
      // What podman itself says of the container warren asked for through its API.
      const host = JSON.parse(podman('container', 'inspect', '--format', '{{json .HostConfig}}', name).out) as Record<
        string,
        unknown
      >;
      expect(host).toMatchObject({
        ReadonlyRootfs: true,
        NetworkMode: 'none',
        Memory: 4 * 1024 ** 3,
        PidsLimit: 4096,
        CpuQuota: 200_000,
        CpuPeriod: 100_000,
      });
      expect(host.SecurityOpt).toContain('no-new-privileges');
      expect((host.CapAdd as unknown[] | null) ?? []).toEqual([]);
      expect((host.Tmpfs as Record<string, string>)['/tmp'] ?? '').toContain('mode=1777');
      // The workspace is at the same path, writable; the same container again.
      const second = await repo.warren('--json', 'exec', 'a', '--', 'sh', '-c', `pwd; echo made > from-container.txt`);
      expect(second.code, second.stderr).toBe(0);
      expect(fs.readFileSync(path.join(ws, 'from-container.txt'), 'utf8')).toBe('made\n');
      expect(podman('container', 'inspect', '--format', '{{.Id}}', name).out).toBe(id);
      const show = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'a');
      expect(show.json.events.filter((e) => e.kind === 'sandbox.container_made')).toHaveLength(1);
      // `warren audit` says where the task runs and what its boundary is.
      const audit = await repo.warren('audit', 'a');
      expect(audit.stdout).toContain(`container: ${name} (podman`);
      expect(audit.stdout).toMatch(/limits: memory 4g, cpus 2, pids 4096/);
    },
  );

  it(
    'a timeout ends the whole tree inside, what left the group and cleared its environment too',
    { timeout: 180_000 },
    async () => {
      const { repo } = await containerTask();
      const tag = `${process.pid}${Date.now() % 100000}`;
      const r = await repo.warren(
        'exec',
        'a',
        '--timeout',
        '3s',
        '--',
        'sh',
        '-c',
        `setsid sleep 1${tag} & env -i setsid sh -c "sleep 2${tag}" & (sleep 3${tag} &); sleep 600`,
      );
      expect(r.code).toBe(124);
      let left = hostProcesses(`sleep `).filter((p) => p.includes(tag));
      for (let i = 0; i < 50 && left.length > 0; i++) {
        await new Promise((res) => setTimeout(res, 100));
        left = hostProcesses(`sleep `).filter((p) => p.includes(tag));
      }
      expect(left).toEqual([]);
      // What a finished command left running in the background goes with it too.
      const bg = await repo.warren('exec', 'a', '--', 'sh', '-c', `env -i setsid sh -c "sleep 4${tag}" & exit 0`);
      expect(bg.code).toBe(0);
      expect(hostProcesses(`sleep 4${tag}`)).toEqual([]);
    },
  );

  it(
    "the command's environment and input arrive as given: a locale the machine lacks makes no warning, nothing of the exec client's is added, input past a pipe's buffer reaches a late reader",
    { timeout: 180_000 },
    async () => {
      const { repo } = await containerTask();
      const input = `${'x'.repeat(300_000)}\n`;
      const r = await runCli(
        ['exec', 'a', '--', 'sh', '-c', 'sleep 1; wc -c; echo "$LC_ALL"; env | grep -c PERL || true'],
        { cwd: repo.root, home: repo.home, env: { LC_ALL: 'xx_YY.UTF-8' }, input },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('300001\nxx_YY.UTF-8\n0\n');
      expect(r.stderr).not.toContain('warning');
    },
  );

  it(
    'input that ended before the command started: a reader sees its end, and every quick command’s output arrives',
    { timeout: 240_000 },
    async () => {
      const { repo } = await containerTask();
      const cli = { cwd: repo.root, home: repo.home, input: '' };
      const read = await runCli(
        ['exec', 'a', '--', 'sh', '-c', 'cat; echo read; env | grep -c WARREN_NO || true'],
        cli,
      );
      expect(read.code, read.stderr).toBe(0);
      expect(read.stdout).toBe('read\n0\n');
      // podman lost the output of a command that ended before the end-of-input frame got through
      // to conmon (containers/podman#11446); with no input, none is sent. Twenty in a row print.
      const outs: string[] = [];
      for (let i = 0; i < 20; i++) outs.push((await runCli(['exec', 'a', '--', 'echo', `out ${i}`], cli)).stdout);
      expect(outs).toEqual(outs.map((_, i) => `out ${i}\n`));
    },
  );

  it('rm removes its container and its record; gc removes one whose task is gone', { timeout: 180_000 }, async () => {
    const { repo } = await containerTask();
    expect((await repo.warren('exec', 'a', '--', 'true')).code).toBe(0);
    const { name, dir } = containerOf(repo, 'a');
    expect(podman('container', 'exists', name).code).toBe(0);
    expect(fs.existsSync(path.join(dir, 'container.json'))).toBe(true);
    const removed = await repo.warren('rm', 'a');
    expect(removed.code, removed.stderr).toBe(0);
    expect(podman('container', 'exists', name).code).toBe(1);
    expect(fs.existsSync(dir)).toBe(false);
    // A crash after the record was written and the container made, before the task's row: gc finds it.
    const made = await repo.warren('new', 'feat', 'b');
    expect(made.code, made.stderr).toBe(0);
    expect((await repo.warren('exec', 'b', '--', 'true')).code).toBe(0);
    const b = containerOf(repo, 'b');
    const ghost = containerOf(repo, 'ghost');
    fs.mkdirSync(ghost.dir, { recursive: true });
    const ledger = JSON.parse(fs.readFileSync(path.join(b.dir, 'container.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(
      path.join(ghost.dir, 'container.json'),
      JSON.stringify({ ...ledger, name: ghost.name, task: 'ghost' }),
    );
    expect(podman('create', '--name', ghost.name, '--network', 'none', 'localhost/warren-base:1', 'true').code).toBe(0);
    onTestFinished(() => void podman('rm', '-f', '--ignore', ghost.name, b.name));
    const gc = await repo.warrenJson<{ removed: { kind: string; id?: string }[] }>('gc');
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.json.removed).toContainEqual(expect.objectContaining({ kind: 'container', id: 'ghost' }));
    expect(podman('container', 'exists', ghost.name).code).toBe(1);
    // A live task's container is kept.
    expect(podman('container', 'exists', b.name).code).toBe(0);
  });

  it(
    'a container killed from outside ends its run as failed; the next command starts it again, and scan is clean',
    { timeout: 180_000 },
    async () => {
      const { repo } = await containerTask();
      expect((await repo.warren('exec', 'a', '--', 'true')).code).toBe(0);
      const { name } = containerOf(repo, 'a');
      const running = runCli(['exec', 'a', '--', 'sleep', '600'], { cwd: repo.root, home: repo.home });
      await waitFor(() => hostProcesses('sleep 600').length > 0);
      expect(podman('kill', name).code).toBe(0);
      const ended = await running;
      expect(ended.code).not.toBe(0);
      const again = await repo.warren('exec', 'a', '--', 'sh', '-c', 'echo back');
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe('back\n');
      const scan = await repo.warrenJson<{ strays: unknown[] }>('scan');
      expect(scan.code, scan.stderr).toBe(0);
      expect(scan.json.strays).toEqual([]);
    },
  );

  it(
    'warren killed mid-command: the connection closes and the init inside ends the run; the next command records it interrupted',
    { timeout: 180_000 },
    async () => {
      const { repo } = await containerTask();
      const tag = `${process.pid}${Date.now() % 100000}`;
      const child = spawn(process.execPath, [BIN, 'exec', 'a', '--', 'sh', '-c', `sleep 5${tag}`], {
        cwd: repo.root,
        env: { ...process.env, WARREN_HOME: repo.home },
        stdio: 'ignore',
      });
      await waitFor(() => hostProcesses(`sleep 5${tag}`).length > 0);
      child.kill('SIGKILL');
      await waitFor(() => hostProcesses(`sleep 5${tag}`).length === 0);
      expect(hostProcesses(`sleep 5${tag}`)).toEqual([]);
      const next = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a');
      expect(next.code).toBe(0);
      const scan = await repo.warrenJson<{ strays: unknown[] }>('scan');
      expect(scan.json.strays).toEqual([]);
      expect((await repo.warren('exec', 'a', '--', 'true')).code).toBe(0);
      const after = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a');
      expect(after.json.events.map((e) => e.kind)).toContain('run.interrupted');
    },
  );

  it(
    "its dev server runs beside the container (in bwrap) and the task's commands reach it by its port",
    { timeout: 180_000 },
    async () => {
      const server = `require('node:http').createServer((q, r) => r.end('hello from the dev server\\n')).listen(Number(process.env.WARREN_PORT), '127.0.0.1');\n`;
      const { repo } = await containerTask(
        'sandbox: container\nservices:\n  web: { run: [node, server.js], ready: { http: /, timeout: 30s }, start: always }\n',
        { 'server.js': server },
      );
      const get =
        'require("node:http").get(process.env.WARREN_SERVICE_WEB_URL, (r) => r.pipe(process.stdout)).on("error", (e) => { console.error(e.message); process.exit(3); })';
      const r = await repo.warren('exec', 'a', '--', 'node', '-e', get);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('hello from the dev server\n');
      expect((await repo.warren('rm', 'a')).code).toBe(0);
    },
  );

  it('limits from warren.yaml hold: a pids limit stops a fork loop', { timeout: 180_000 }, async () => {
    const { repo } = await containerTask('sandbox: { kind: container, pids: 32 }\n');
    // node counts its own threads against the limit too: fewer than 32 children can start.
    const script =
      'const cp = require("node:child_process"); let ok = 0, refused = 0; for (let i = 0; i < 60; i++) { const c = cp.spawn("sleep", ["30"]); c.on("error", () => {}); if (c.pid) ok++; else refused++; } console.log(`started ${ok} refused ${refused}`); process.exit(0);';
    const r = await repo.warren('exec', 'a', '--', 'node', '-e', script);
    expect(r.code, r.stderr).toBe(0);
    const [, started, refused] = /started (\d+) refused (\d+)/.exec(r.stdout) ?? [];
    expect(Number(started)).toBeLessThan(32);
    expect(Number(refused)).toBeGreaterThan(0);
    const { name } = containerOf(repo, 'a');
    expect(podman('container', 'inspect', '--format', '{{.HostConfig.PidsLimit}}', name).out).toBe('32');
  });

  it(
    "an allow list: the command reaches warren's egress proxy through the bridge, which refuses a host not on it",
    { timeout: 180_000 },
    async () => {
      const { repo } = await containerTask('sandbox: { kind: container, allow: [registry.npmjs.org] }\n');
      const script = `require('node:http').get({ host: '127.0.0.1', port: Number(new URL(process.env.HTTP_PROXY).port), path: 'http://not-on-the-list.invalid/' }, (r) => { console.log('status', r.statusCode); r.resume(); r.on('end', () => process.exit(0)); }).on('error', (e) => { console.error(e.message); process.exit(3); })`;
      const r = await repo.warren('exec', 'a', '--', 'node', '-e', script);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('status 403');
      const events = await repo.warrenJson<{ events: { kind: string; message: string }[] }>('show', 'a');
      expect(events.json.events.map((e) => e.kind)).toContain('sandbox.egress_refused');
    },
  );

  it(
    'the gate of a container task runs in a container of its own, removed with the integration workspace',
    { timeout: 300_000 },
    async () => {
      const { repo, ws } = await containerTask('sandbox: container\nverify:\n  - { id: test, run: sh test.sh }\n', {
        'test.sh': 'exit 0\n',
      });
      // The gate's step commits inside and points branches at it: what git writes there is the gate container's own.
      fs.writeFileSync(
        path.join(ws, 'test.sh'),
        [
          'cat /proc/1/comm > /dev/stderr',
          'git -c user.name=x -c user.email=x@example.invalid commit -q --allow-empty -m evil',
          'git update-ref "refs/heads/(detached)" HEAD',
          'git update-ref refs/heads/main HEAD',
          'exit 0',
        ].join('\n') + '\n',
      );
      expect((await repo.warren('checkpoint', 'a', '-m', 'tests')).code).toBe(0);
      const landed = await repo.warren('land', 'a');
      expect(landed.code, landed.stderr).toBe(0);
      expect(landed.stderr).toMatch(/sandbox container/);
      const left = podman('ps', '-a', '--filter', `label=warren.home=${repo.home}`, '--format', '{{.Labels}}').out;
      expect(left).not.toMatch(/warren\.task:queue-/);
      expect(repo.git('log', '--format=%s', 'main')).not.toContain('evil');
      expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/heads/')).not.toContain('detached');
    },
  );

  it(
    "two runs at once: the one that ends first leaves the other's init and command running (each init carries its run's mark)",
    { timeout: 180_000 },
    async () => {
      const { repo, ws } = await containerTask();
      // Through the library: the command line holds the task while one runs (services and the
      // dashboard's runs do not), so two runs are started in this process.
      const ctx = await project(repo);
      const task = requireTask(ctx, 'a');
      const run = (argv: string[]) =>
        runInTask(ctx, task, { kind: 'exec', label: 'exec', argv, stdin: 'ignore', output: NO_OUTPUT });
      // The first run waits (at most a minute) for `go`, which the test makes once the second run has ended.
      const long = run([
        'sh',
        '-c',
        'touch started; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; test -e go && touch survived',
      ]);
      await waitFor(() => fs.existsSync(path.join(ws, 'started')));
      expect(fs.existsSync(path.join(ws, 'started'))).toBe(true);
      expect((await run(['true'])).exitCode).toBe(0);
      fs.writeFileSync(path.join(ws, 'go'), '');
      expect((await long).exitCode).toBe(0);
      expect(fs.existsSync(path.join(ws, 'survived'))).toBe(true);
    },
  );

  it(
    'is made during new, running before the first command; not where something is provisioned (a layer mounted later would not be seen inside)',
    { timeout: 180_000 },
    async () => {
      const { repo } = await containerTask();
      const { name } = containerOf(repo, 'a');
      expect(podman('container', 'inspect', '--format', '{{.State.Running}}', name).out).toBe('true');
      expect((await repo.warren('exec', 'a', '--', 'true')).code).toBe(0);
      const made = await repo.warrenJson<{ events: { kind: string }[] }>('show', 'a');
      expect(made.json.events.filter((e) => e.kind === 'sandbox.container_made')).toHaveLength(1);

      const later = await containerTask('sandbox: container\nprovision: [{path: .env, mode: copy}]\n', {
        '.gitignore': '.env\n',
      });
      const other = containerOf(later.repo, 'a');
      expect(podman('container', 'exists', other.name).code).not.toBe(0);
      expect((await later.repo.warren('exec', 'a', '--', 'true')).code).toBe(0);
      expect(podman('container', 'exists', other.name).code).toBe(0);
    },
  );
});

describe('where podman is missing', () => {
  it('new --sandbox container is refused with exit 2, naming the package, and makes nothing', async () => {
    const repo = makeRepo();
    const emptyPath = tmpDir('warren-no-podman-');
    // git and node stay reachable by their absolute paths through the links; podman does not.
    for (const tool of ['git', 'node', 'sh']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (found) fs.symlinkSync(found, path.join(emptyPath, tool));
    }
    const r = await runWarren(['--json', 'new', 'feat', 'a', '--sandbox', 'container'], {
      cwd: repo.root,
      home: repo.home,
      env: { PATH: emptyPath },
    });
    expect(r.code, r.stderr).toBe(2);
    const error = (JSON.parse(r.stdout) as { error: { code: string; message: string; hint: string } }).error;
    expect(error.code).toBe('RUNNER_UNAVAILABLE');
    expect(error.message).toMatch(/podman is not installed \(not found on PATH\); nothing was run/);
    expect(error.hint).toMatch(/apt-get install podman/);
    expect(repo.git('branch', '--list', 'feat/a')).toBe('');
    expect(fs.existsSync(path.join(repo.home, 'worktrees'))).toBe(false);
  });
});
