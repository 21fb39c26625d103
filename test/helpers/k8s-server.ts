import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { WebSocketServer, type WebSocket } from 'ws';
import { parse } from 'yaml';

/**
 * A loopback Kubernetes API server for the k8s runner's tests (no cluster runs on this machine):
 * plain HTTP, the agent-sandbox objects warren touches, each created object validated against
 * its CRD's own openAPIV3Schema (k8s/crds/, ajv; CEL rules are not checked) and refused with a
 * 422 Status as a real server would. Its "controller" hands a claim a warm sandbox — a started
 * podman container of the container runner's base image — or starts one (cold), and deletes it
 * with the claim. Exec is the pods/exec subresource over a websocket (`v5.channel.k8s.io` or
 * `v4`), run as `podman exec` in that container.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;
const CRDS = path.join(import.meta.dirname, '..', '..', 'k8s', 'crds');
const IMAGE = 'localhost/warren-base:1';
const SYSTEM = [
  '/usr',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/gitconfig',
];

type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

export interface K8sServer {
  url: string;
  kubeconfig: string;
  /** Every object created, in order, as received (what warren sent). */
  created: { plural: string; body: unknown }[];
  objects(plural: string): Obj[];
  /** Sandboxes started (warm and cold), and those started but not yet claimed. */
  started: () => number;
  close(): Promise<void>;
}

function schemas(): Map<string, ValidateFunction<unknown>> {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  const out = new Map<string, ValidateFunction<unknown>>();
  for (const file of fs.readdirSync(CRDS).filter((f) => f.endsWith('.yaml'))) {
    const crd = parse(fs.readFileSync(path.join(CRDS, file), 'utf8')) as {
      spec: { names: { plural: string }; versions: { name: string; schema: { openAPIV3Schema: object } }[] };
    };
    const v = crd.spec.versions.find((x) => x.name === 'v1beta1');
    if (v) out.set(crd.spec.names.plural, ajv.compile<unknown>(v.schema.openAPIV3Schema));
  }
  return out;
}

function podman(...args: string[]): string {
  const r = spawnSync('podman', args, { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`podman ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

export interface K8sServerOptions {
  /**
   * What the sandboxes' image has installed besides the base (an agent CLI): host folders bound
   * read-only at a path of the pod's (`{podPath: hostPath}`), and commands linked from
   * /usr/local/bin, on the pod's PATH (`{name: podPath}`).
   */
  image?: { folders?: Record<string, string>; bin?: Record<string, string> };
  /** The sandbox container's user (`UID:GID`), as a template's `securityContext.runAsUser` sets it; root when absent. */
  user?: string;
}

/**
 * A loopback cluster for one test file: a folder of its own, the container runner's image (built
 * offline when missing), the server; its `close()` ends the server and removes the folder.
 */
export async function startTestCluster(options: K8sServerOptions = {}): Promise<K8sServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'warren-k8s-server-'));
  if (spawnSync('podman', ['image', 'exists', 'localhost/warren-base:1']).status !== 0) {
    const { ensureApi, ensureBaseImage } = await import('../../src/run/container/podman.js');
    await ensureBaseImage(await ensureApi(dir));
  }
  const server = await startK8sServer(dir, options);
  return {
    ...server,
    async close() {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startK8sServer(dir: string, options: K8sServerOptions = {}): Promise<K8sServer> {
  const validate = schemas();
  const label = `warren.test.k8s=${randomBytes(6).toString('hex')}`;
  const store = new Map<string, Map<string, Obj>>();
  const table = (plural: string): Map<string, Obj> => store.get(plural) ?? store.set(plural, new Map()).get(plural)!;
  const created: K8sServer['created'] = [];
  const warm: string[] = [];
  let count = 0;
  const installed: string[] = [];
  for (const [at, from] of Object.entries(options.image?.folders ?? {})) installed.push('-v', `${from}:${at}:ro`);
  if (options.image?.bin) {
    const bin = path.join(dir, 'image-bin');
    fs.mkdirSync(bin, { recursive: true });
    for (const [name, target] of Object.entries(options.image.bin)) fs.symlinkSync(target, path.join(bin, name));
    installed.push('-v', `${bin}:/usr/local/bin:ro`);
  }
  // warren's template's pod, as podman: its emptyDirs (/work, /tmp) as tmpfs, no capability.
  const sandbox = (): string => {
    const name = `sandbox-${++count}-${randomBytes(3).toString('hex')}`;
    const binds = [...SYSTEM.filter((p) => fs.existsSync(p)).flatMap((p) => ['-v', `${p}:${p}:ro`]), ...installed];
    podman(
      'run',
      '-d',
      '--name',
      name,
      '--label',
      label,
      '--network',
      'host',
      '--cap-drop',
      'all',
      ...(options.user ? ['--user', options.user] : []),
      '--tmpfs',
      '/work:rw,mode=1777',
      '--tmpfs',
      '/tmp:rw,mode=1777',
      ...binds,
      IMAGE,
      'perl',
      '-e',
      '$SIG{CHLD} = "IGNORE"; sleep',
    );
    return name;
  };
  const ready = (claim: Obj, pod: string): void => {
    const name = claim.metadata.name;
    table('sandboxes').set(name, {
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name, annotations: { 'agents.x-k8s.io/pod-name': pod } },
    });
    const now = new Date().toISOString();
    claim.status = {
      sandbox: { name },
      conditions: [{ type: 'Ready', status: 'True', reason: 'SandboxReady', message: '', lastTransitionTime: now }],
    };
  };
  const status = (code: number, reason: string, message: string): object => ({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code,
    reason,
    message,
  });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (code: number, body: unknown): void => {
        res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      };
      const m = /^\/apis\/([a-z0-9.-]+)\/v1beta1\/namespaces\/[a-z0-9-]+\/([a-z]+)(?:\/([a-z0-9.-]+))?$/.exec(
        (req.url ?? '').split('?')[0] ?? '',
      );
      if (!m) return send(404, status(404, 'NotFound', `no route ${req.url}`));
      const [, , plural = '', name] = m;
      const objects = table(plural);
      if (req.method === 'GET' && name) {
        const o = objects.get(name);
        return o ? send(200, o) : send(404, status(404, 'NotFound', `${plural} "${name}" not found`));
      }
      if (req.method === 'DELETE' && name) {
        const o = objects.get(name);
        if (!o) return send(404, status(404, 'NotFound', `${plural} "${name}" not found`));
        objects.delete(name);
        if (plural === 'sandboxclaims') {
          const pod = table('sandboxes').get(name)?.metadata.annotations?.['agents.x-k8s.io/pod-name'];
          table('sandboxes').delete(name);
          if (pod) spawnSync('podman', ['rm', '-f', '-t', '0', pod]);
        }
        return send(200, status(200, 'Success', 'deleted'));
      }
      if (req.method === 'POST' && !name) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
        created.push({ plural, body: structuredClone(body) });
        const check = validate.get(plural);
        if (!check) return send(404, status(404, 'NotFound', `no resource ${plural}`));
        const valid: boolean = check(body);
        if (!valid) {
          const why = (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
          return send(422, status(422, 'Invalid', `${body.kind} "${body.metadata?.name}" is invalid: ${why}`));
        }
        if (objects.has(body.metadata.name))
          return send(409, status(409, 'AlreadyExists', `${plural} "${body.metadata.name}" already exists`));
        objects.set(body.metadata.name, body);
        if (plural === 'sandboxwarmpools') {
          const replicas = (body.spec?.replicas as number | undefined) ?? 1;
          for (let i = 0; i < replicas; i++) warm.push(sandbox());
        }
        if (plural === 'sandboxclaims') {
          const pod = warm.shift();
          if (pod) ready(body, pod);
          else setImmediate(() => ready(body, sandbox())); // cold: Ready once started
          // The pool refills behind the claim, as agent-sandbox's controller does.
          if (table('sandboxwarmpools').size > 0) setImmediate(() => warm.push(sandbox()));
        }
        return send(201, body);
      }
      send(405, status(405, 'MethodNotAllowed', `${req.method} ${req.url}`));
    });
  });

  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (p) =>
      p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : p.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false,
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '', 'http://x');
    const m = /^\/api\/v1\/namespaces\/[a-z0-9-]+\/pods\/([a-z0-9.-]+)\/exec$/.exec(url.pathname);
    if (!m?.[1]) return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => exec(ws, m[1]!, url.searchParams));
  });
  const execs = new Set<ChildProcess>();
  const exec = (ws: WebSocket, pod: string, q: URLSearchParams): void => {
    const stdin = q.get('stdin') === 'true';
    const child = spawn('podman', ['exec', ...(stdin ? ['-i'] : []), pod, ...q.getAll('command')], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    execs.add(child);
    const out = (channel: number) => (data: Buffer) =>
      ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.from([channel]), data]));
    child.stdout.on('data', out(1));
    child.stderr.on('data', out(2));
    child.stdin.on('error', () => {});
    if (!stdin) child.stdin.end();
    ws.on('message', (data: Buffer) => {
      if (data[0] === 0) child.stdin.write(data.subarray(1));
      else if (data[0] === 255 && data[1] === 0) child.stdin.end(); // v5: the client closed its stdin
    });
    // The connection gone: the command's input ends (warren's init then ends the run).
    ws.on('close', () => child.stdin.end());
    child.on('close', (code) => {
      execs.delete(child);
      const s =
        code === 0
          ? { metadata: {}, status: 'Success' }
          : {
              metadata: {},
              status: 'Failure',
              reason: 'NonZeroExitCode',
              message: `command terminated with non-zero exit code: ${code}`,
              details: { causes: [{ reason: 'ExitCode', message: String(code ?? 1) }] },
            };
      if (ws.readyState === ws.OPEN)
        ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(s))]), () => ws.close());
    });
  };

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster: {server: "${url}", insecure-skip-tls-verify: true}\nusers:\n- name: loop\n  user: {token: loopback}\ncontexts:\n- name: loop\n  context: {cluster: loop, user: loop, namespace: default}\ncurrent-context: loop\n`,
  );
  return {
    url,
    kubeconfig,
    created,
    objects: (plural) => [...table(plural).values()],
    started: () => count,
    async close() {
      for (const c of execs) c.kill('SIGKILL');
      wss.close();
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      const left = podman('ps', '-aq', '--filter', `label=${label}`);
      if (left) spawnSync('podman', ['rm', '-f', '-t', '0', ...left.split('\n')]);
    },
  };
}
