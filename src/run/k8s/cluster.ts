import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { PassThrough, Readable } from 'node:stream';
import { CustomObjectsApi, Exec, KubeConfig, type V1Status } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { WarrenError } from '../../errors.js';
import type { UserConfig } from '../../config/user-schema.js';
import { k8sManifest } from '../helper-scripts.js';

/**
 * A Kubernetes cluster of the user's config.yaml, through @kubernetes/client-node (1.4.x: 2.x
 * needs Node ≥ 22.19): the one seam that talks to its API server. Loaded only for a
 * `runner: k8s:NAME` task (importing it costs a noticeable part of a second).
 */
export type ClusterSettings = NonNullable<UserConfig['clusters']>[string];

export interface Cluster {
  name: string;
  settings: ClusterSettings;
  kubeconfig: string;
  config: KubeConfig;
  objects: CustomObjectsApi;
}

const GROUP = 'extensions.agents.x-k8s.io';
const CORE_GROUP = 'agents.x-k8s.io';
const VERSION = 'v1beta1';

/** Where the kubeconfig is: the cluster's own setting, else $KUBECONFIG's first file, else ~/.kube/config. */
export function kubeconfigOf(settings: ClusterSettings): string {
  return settings.kubeconfig ?? process.env.KUBECONFIG?.split(':')[0] ?? path.join(os.homedir(), '.kube', 'config');
}

export function settingsOf(user: UserConfig, name: string, what: string): ClusterSettings {
  const settings = user.clusters?.[name];
  if (settings) return settings;
  throw new WarrenError(
    'RUNNER_UNAVAILABLE',
    `${what} runs in the Kubernetes cluster ${name}, which $WARREN_HOME/config.yaml does not declare; nothing was run.`,
    {
      hint: `Declare it under \`clusters: { ${name}: { kubeconfig: /path/to/kubeconfig, namespace: NS } }\` in $WARREN_HOME/config.yaml (a repository's warren.yaml cannot), or set \`runner: local\`.`,
    },
  );
}

export function connect(name: string, settings: ClusterSettings): Cluster {
  const kubeconfig = kubeconfigOf(settings);
  if (!fs.existsSync(kubeconfig)) {
    throw new WarrenError(
      'RUNNER_UNAVAILABLE',
      `cluster ${name}'s kubeconfig ${kubeconfig} does not exist; nothing was run.`,
      {
        hint: `Set \`clusters.${name}.kubeconfig\` in $WARREN_HOME/config.yaml to your kubeconfig's absolute path.`,
      },
    );
  }
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  if (settings.context) config.setCurrentContext(settings.context);
  return { name, settings, kubeconfig, config, objects: config.makeApiClient(CustomObjectsApi) };
}

/** The HTTP status of a client-node failure, or null when it is not one (a refused connection). */
export function statusOf(err: unknown): number | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : null;
}

export function apiFailed(cluster: Cluster, what: string, err: unknown): WarrenError {
  const body = (err as { body?: unknown } | null)?.body;
  let said = err instanceof Error ? err.message : String(err);
  if (typeof body === 'string') {
    try {
      said = (JSON.parse(body) as { message?: string }).message ?? said;
    } catch {
      // not JSON: the message stands
    }
  }
  return new WarrenError('RUNNER_UNAVAILABLE', `${what} in cluster ${cluster.name}: ${said.split('\n')[0]}`, {
    hint: `Check that the cluster answers (\`kubectl --kubeconfig ${cluster.kubeconfig} get sandboxclaims -n ${cluster.settings.namespace}\`) and that agent-sandbox is installed there.`,
  });
}

type Obj = Record<string, unknown> & {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
};

export async function getObject(cluster: Cluster, plural: string, name: string): Promise<Obj | null> {
  try {
    return (await cluster.objects.getNamespacedCustomObject({
      group: plural === 'sandboxes' ? CORE_GROUP : GROUP,
      version: VERSION,
      namespace: cluster.settings.namespace,
      plural,
      name,
    })) as Obj;
  } catch (err) {
    if (statusOf(err) === 404) return null;
    throw apiFailed(cluster, `reading ${plural}/${name}`, err);
  }
}

export async function createObject(cluster: Cluster, plural: string, body: Obj): Promise<void> {
  try {
    await cluster.objects.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: cluster.settings.namespace,
      plural,
      body,
    });
  } catch (err) {
    if (statusOf(err) === 409) return; // there already: made by an earlier try, or another warren
    throw apiFailed(cluster, `creating ${plural}/${body.metadata?.name ?? '?'}`, err);
  }
}

/** Deletes an object; true when it was there. */
export async function deleteObject(cluster: Cluster, plural: string, name: string): Promise<boolean> {
  try {
    await cluster.objects.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: cluster.settings.namespace,
      plural,
      name,
    });
    return true;
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw apiFailed(cluster, `deleting ${plural}/${name}`, err);
  }
}

/** warren's shipped manifest (k8s/NAME.yaml), parsed. */
function manifest(file: string): Obj {
  return parse(fs.readFileSync(k8sManifest(file), 'utf8')) as Obj;
}

/**
 * warren's SandboxTemplate and SandboxWarmPool (k8s/warren-template.yaml, k8s/warren-warmpool.yaml),
 * made when the cluster lacks them, with the user's image, RuntimeClass and pool size. Ones
 * already there are left as they are: the cluster's administrator may have tuned them.
 */
export async function ensurePool(cluster: Cluster): Promise<void> {
  const name = cluster.settings.template;
  if ((await getObject(cluster, 'sandboxwarmpools', name)) !== null) return;
  if ((await getObject(cluster, 'sandboxtemplates', name)) === null) {
    const template = manifest('warren-template.yaml') as Obj & { spec: { podTemplate: { spec: PodSpec } } };
    template.metadata = { ...template.metadata, name };
    const pod = template.spec.podTemplate.spec;
    if (cluster.settings.runtimeClass) pod.runtimeClassName = cluster.settings.runtimeClass;
    else delete pod.runtimeClassName;
    if (cluster.settings.image && pod.containers[0]) pod.containers[0].image = cluster.settings.image;
    await createObject(cluster, 'sandboxtemplates', template);
  }
  const pool = manifest('warren-warmpool.yaml') as Obj & {
    spec: { replicas: number; sandboxTemplateRef: { name: string } };
  };
  pool.metadata = { ...pool.metadata, name };
  pool.spec.replicas = cluster.settings.replicas;
  pool.spec.sandboxTemplateRef.name = name;
  await createObject(cluster, 'sandboxwarmpools', pool);
}

interface PodSpec {
  runtimeClassName?: string;
  containers: { image: string }[];
}

/**
 * The claim warren makes for a task: its warm pool, nothing else. No `env` and no
 * `volumeClaimTemplates`: either makes agent-sandbox cold-start the sandbox instead of handing
 * out a warm one (test/run/k8s-runner.test.ts checks no claim carries them).
 */
export function claimBody(name: string, pool: string, labels: Record<string, string>): Obj {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'SandboxClaim',
    metadata: { name, labels },
    spec: { warmPoolRef: { name: pool } },
  };
}

/** The pod a ready claim's sandbox runs in; null while it is not ready. */
export async function readyPod(cluster: Cluster, claim: string): Promise<string | null> {
  const c = (await getObject(cluster, 'sandboxclaims', claim)) as {
    status?: { sandbox?: { name?: string }; conditions?: { type: string; status: string }[] };
  } | null;
  if (c === null) throw new WarrenError('RUNNER_UNAVAILABLE', `claim ${claim} is gone from cluster ${cluster.name}.`);
  const ready = c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false;
  const sandbox = c.status?.sandbox?.name;
  if (!ready || !sandbox) return null;
  const s = await getObject(cluster, 'sandboxes', sandbox);
  return s?.metadata?.annotations?.['agents.x-k8s.io/pod-name'] ?? sandbox;
}

export interface ExecResult {
  status: number;
  stdout: Buffer;
  stderr: string;
}

/** The container of warren's template that runs the task's commands. */
export const CONTAINER = 'sandbox';

/**
 * One command in the pod, through the API server's exec (client-node's `Exec`: a websocket,
 * `v5.channel.k8s.io` or `v4`), `input` as its standard input; its output collected.
 */
export async function execCollect(
  cluster: Cluster,
  pod: string,
  argv: readonly string[],
  input?: Buffer,
): Promise<ExecResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdin = input === undefined ? null : Readable.from([input]);
  return new Promise((resolve, reject) => {
    let status: V1Status | null = null;
    new Exec(cluster.config)
      .exec(
        cluster.settings.namespace,
        pod,
        CONTAINER,
        [...argv],
        collector(out),
        collector(err),
        stdin,
        false,
        (s) => (status = s),
      )
      .then((ws) => {
        ws.on('close', () =>
          resolve({ status: exitOf(status), stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }),
        );
        ws.on('error', reject);
      }, reject);
  });
}

function collector(into: Buffer[]): Writable {
  const w = new PassThrough();
  w.on('data', (c: Buffer) => into.push(c));
  return w;
}

/** A command's exit status from the exec's closing Status (`Success`, or a `NonZeroExitCode` cause). */
export function exitOf(status: V1Status | null): number {
  if (status === null) return 125;
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const n = Number(cause?.message);
  return Number.isInteger(n) ? n : 125;
}
