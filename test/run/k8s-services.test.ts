import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { claimPlace } from '../../src/run/k8s/ledger.js';
import { unavailable } from '../helpers/capabilities.js';
import {
  claimedSince,
  claimNames,
  claimsSent,
  clusterForFile,
  POD_PROCESSES,
  podmanHas,
  projectOf,
} from '../helpers/k8s-cluster.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

/**
 * warren.yaml's `run:` and redis services of a task in a cluster run in the task's own pod
 * (src/run/k8s/pod-service.ts), started through the k8s runner's exec seam, against the loopback
 * API server of test/helpers/k8s-server.ts. Its "pods" are podman containers on the host's
 * network, so that another claim cannot reach a pod's loopback is a real cluster's (each pod has
 * a network namespace of its own) and is not tested here. A postgres service is refused up front
 * (test/run/k8s-runner-flag.test.ts).
 */
// The loopback cluster's pods bind this machine's /usr: its redis-server is theirs.
const noPodman = unavailable(import.meta.filename, 'podman') ?? unavailable(import.meta.filename, 'redis');

const cluster = clusterForFile(noPodman);

const SERVER = `const http = require('http');
http
  .createServer((q, s) => {
    console.log('hit ' + q.url);
    s.end('hello from web');
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('web listening on ' + process.env.PORT));
`;

function clusterRepo(services: string): TestRepo {
  const repo = makeRepo({
    files: { 'README.md': '# main\n', 'server.js': SERVER, 'warren.yaml': `runner: k8s:loop\nservices:\n${services}` },
  });
  fs.mkdirSync(repo.home, { recursive: true });
  fs.writeFileSync(
    path.join(repo.home, 'config.yaml'),
    `clusters:\n  loop:\n    kubeconfig: ${cluster().kubeconfig}\n    namespace: default\n    replicas: 1\n`,
  );
  return repo;
}

const BOTH = "  web: { run: 'node server.js', ready: { http: / } }\n  cache: { kind: redis }\n";

/** In the pod: redis's answer to PING, then the web service's to GET /from-exec. */
const REACH = [
  'sh',
  '-c',
  'redis-cli -u "$REDIS_URL" ping 2>/dev/null; node -e \'fetch(process.env.WARREN_SERVICE_WEB_URL + "/from-exec").then((r) => r.text()).then(console.log, (e) => console.log("refused " + e.cause?.code))\'',
];

/** In the pod: the command lines of its processes. */
/** The pid of the exec client on this machine that holds a service (its daemon record), or null. */
function daemonPid(repo: TestRepo, task: string, name: string): number | null {
  try {
    const file = path.join(repo.home, 'services', projectOf(repo.home), task, name, 'daemon.json');
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

const alive = (pid: number): boolean => fs.existsSync(`/proc/${pid}`);

type Status = { name: string; state: string; cluster?: string; pod?: string; url: string | null };

/** Polls (bounded) until `done` holds of `service logs`'s text. */
async function logsUntil(repo: TestRepo, id: string, name: string, done: (text: string) => boolean): Promise<string> {
  let text = '';
  for (let i = 0; i < 300; i++) {
    const r = await repo.warren('service', 'logs', id, name);
    text = r.stdout;
    if (done(text)) return text;
    await new Promise((res) => setTimeout(res, 100));
  }
  return text;
}

describe.skipIf(noPodman !== null)(
  "services of a task in a cluster run in the task's pod (loopback API server)",
  () => {
    it(
      'new starts a run and a redis service in the pod: reached there on loopback, logged here, stopped, gone with rm',
      { timeout: 300_000 },
      async () => {
        const repo = clusterRepo(BOTH);
        const made = await repo.warren('new', 'feat', 'a');
        expect(made.code, made.stderr).toBe(0);
        // `show` says where each runs: the cluster, and the pod.
        const shown = await repo.warrenJson<{ services: Status[] }>('show', 'a');
        const web = shown.json.services.find((s) => s.name === 'web');
        const cache = shown.json.services.find((s) => s.name === 'cache');
        expect(web).toMatchObject({ state: 'running', cluster: 'loop' });
        expect(cache).toMatchObject({ state: 'running', cluster: 'loop' });
        const pod = web?.pod ?? '';
        expect(pod).not.toBe('');
        expect(cache?.pod).toBe(pod);
        const human = await repo.warren('show', 'a');
        expect(human.stdout).toContain(`in cluster loop, pod ${pod}`);

        // The task's commands reach both on the pod's loopback, at the ports warren gave them.
        const reached = await repo.warren('exec', 'a', '--', ...REACH);
        expect(reached.code, reached.stderr).toBe(0);
        expect(reached.stdout).toBe('PONG\nhello from web\n');
        // They run in the pod (its processes), each under warren's init there.
        const inPod = await repo.warren('exec', 'a', '--', ...POD_PROCESSES);
        expect(inPod.stdout).toContain('redis-server');
        expect(inPod.stdout).toContain('node server.js');
        // An exec ending in the pod leaves the services' processes alone: still running, still reached.
        const again = await repo.warren('exec', 'a', '--', ...REACH);
        expect(again.stdout).toBe('PONG\nhello from web\n');
        const after = await repo.warrenJson<{ services: Status[] }>('show', 'a');
        expect(after.json.services.map((s) => [s.name, s.state])).toEqual([
          ['web', 'running'],
          ['cache', 'running'],
        ]);

        // Its output comes back here, into its log.
        const logs = await logsUntil(repo, 'a', 'web', (t) => t.includes('hit /from-exec'));
        expect(logs).toContain('web listening on');
        expect(logs).toContain('hit /from-exec');

        // Stopped: gone from the pod when the stop returns.
        const stopped = await repo.warrenJson<Status>('service', 'stop', 'a', 'web');
        expect(stopped.code, stopped.stderr).toBe(0);
        expect(stopped.json).toMatchObject({ state: 'stopped', cluster: 'loop' });
        const gone = await repo.warren('exec', 'a', '--', ...POD_PROCESSES);
        expect(gone.stdout).not.toContain('node server.js');
        expect(gone.stdout).toContain('redis-server');
        const refused = await repo.warren('exec', 'a', '--', ...REACH);
        expect(refused.stdout).toBe('PONG\nrefused ECONNREFUSED\n');

        // rm: the services stopped (nothing of them here), the claim deleted, its pod gone.
        const cachePid = daemonPid(repo, 'a', 'cache');
        expect(cachePid).not.toBeNull();
        expect(alive(cachePid ?? 0)).toBe(true);
        const { name: claim } = claimPlace(repo.home, projectOf(repo.home), 'a');
        expect(claimNames(cluster())).toContain(claim);
        const removed = await repo.warren('rm', 'a', '--discard');
        expect(removed.code, removed.stderr).toBe(0);
        expect(alive(cachePid ?? 0)).toBe(false);
        expect(fs.existsSync(path.join(repo.home, 'services', projectOf(repo.home), 'a'))).toBe(false);
        expect(claimNames(cluster())).not.toContain(claim);
        expect(podmanHas(pod)).toBe(false);
      },
    );

    it(
      'a service that exits in the pod before it is ready fails new with its log: the task is undone, its claim and pod gone',
      { timeout: 300_000 },
      async () => {
        const repo = clusterRepo("  web: { run: 'echo broken in the pod >&2; exit 3', ready: { port: true } }\n");
        const before = claimsSent(cluster());
        const made = await repo.warrenJson<{ error: { code: string; message: string } }>('new', 'feat', 'b');
        expect(made.code).toBe(1);
        expect(made.json.error.code, made.json.error.message).toBe('CREATE_FAILED');
        expect(made.json.error.message).toContain('exited with status 3 before it was ready');
        expect(made.json.error.message).toContain('broken in the pod');
        expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
        // It was claimed (the service ran in the pod), and the undo deleted the claim and its pod.
        const claimed = claimedSince(cluster(), before);
        expect(claimed).toHaveLength(1);
        expect(claimNames(cluster())).not.toContain(claimed[0]);
        expect(
          cluster()
            .objects('sandboxes')
            .map((o) => o.metadata.name),
        ).not.toContain(claimed[0]);
      },
    );

    it(
      'an on-demand service starts in the pod when asked; gc stops the services of a task that is gone and deletes its claim',
      { timeout: 300_000 },
      async () => {
        const repo = clusterRepo("  web: { run: 'node server.js', ready: { port: true }, start: on-demand }\n");
        const made = await repo.warren('new', 'feat', 'g');
        expect(made.code, made.stderr).toBe(0);
        expect(daemonPid(repo, 'g', 'web')).toBeNull();
        const started = await repo.warrenJson<Status>('service', 'start', 'g', 'web');
        expect(started.code, started.stderr).toBe(0);
        expect(started.json).toMatchObject({ state: 'running', cluster: 'loop' });
        const pod = started.json.pod ?? '';
        const reached = await repo.warren(
          'exec',
          'g',
          '--',
          'node',
          '-e',
          'fetch(process.env.WARREN_SERVICE_WEB_URL).then((r) => r.text()).then(console.log)',
        );
        expect(reached.stdout).toBe('hello from web\n');
        const pid = daemonPid(repo, 'g', 'web') ?? 0;
        expect(alive(pid)).toBe(true);
        // The task's row goes (a crash of rm): gc stops its service and deletes its claim.
        const store = openStore(repo.home);
        try {
          store.deleteTask(projectOf(repo.home), 'g');
        } finally {
          store.close();
        }
        const gc = await repo.warren('gc');
        expect(gc.code, gc.stderr).toBe(0);
        expect(alive(pid)).toBe(false);
        expect(claimNames(cluster())).not.toContain(claimPlace(repo.home, projectOf(repo.home), 'g').name);
        expect(podmanHas(pod)).toBe(false);
      },
    );
  },
);
