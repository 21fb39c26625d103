import fs from 'node:fs';
import net from 'node:net';
import { startBounded, tryKill } from '../system/spawn.js';
import { childrenOf, pidNamespaceOf, pidsInNamespace } from '../system/proc.js';
import { bridgeScript, startEgressProxy, type EgressProxy } from './egress.js';
import { sandboxArgv, type SandboxProfile } from './sandbox.js';
import { mountArgv } from '../system/run-mounts.js';
import { stageArgv, Staging } from '../system/sandbox-uid.js';
import type { RunMount } from '../system/mounts.js';

/**
 * The host's half of a sandboxed service (src/run/service-runner.ts): warren's own program, the
 * command of the service's daemon, which runs the service's command in its sandbox for as long
 * as it runs. A run's egress proxy lives in the warren that started the run; a service outlives
 * that warren, so its proxy lives here. And a service without a network of its own is reached
 * from the host: this process listens on the service's port on the host's loopback (once the
 * service accepts on it inside) and hands each connection in to the sandbox's bridge, over
 * the IPC channel the bridge inherits — no socket file the sandbox could replace with a link.
 *
 * `node service-host.js SPEC`: SPEC is a JSON file warren wrote in the service's own folder (out
 * of the sandbox's reach). Signals are handed on to every process of the sandbox; it exits with
 * the command's status. What it says goes to the service's log.
 */

export interface ServiceHostSpec {
  profile: SandboxProfile;
  cwd: string;
  /** The service's command, as its configuration gives it. */
  argv: string[];
  /** The service's own port: reached from the host through this process when the sandbox has no network. */
  port: number | null;
  node: string;
  /** Where the egress proxy's socket goes: warren's temporary folder, not the task's (whose path may be too long for a socket). */
  tmp: string;
  /** The WARREN_HOME whose service it is: named in the proxy folder's name, so that its `gc` collects what a killed host left (egress-gc.ts). */
  home: string;
  /**
   * As root, the sandbox's root is another uid outside (sandbox-uid.ts): its paths are bound from
   * idmapped clones, and the task's copy-on-write layers mounted from clones of theirs, here.
   */
  stage: { mounts: RunMount[] } | null;
}

export function readServiceHostSpec(file: string): ServiceHostSpec {
  const spec = JSON.parse(fs.readFileSync(file, 'utf8')) as ServiceHostSpec;
  if (!spec || typeof spec.cwd !== 'string' || !Array.isArray(spec.argv) || typeof spec.profile !== 'object')
    throw new Error(`${file} is not a service host's spec`);
  return spec;
}

/** Where it says what happened: the service's log (its stderr), given by the program's entry. */
type Say = (line: string) => void;

async function main(specFile: string, say: Say): Promise<number> {
  const spec = readServiceHostSpec(specFile);
  let egress: EgressProxy | null = null;
  if (spec.profile.allow) {
    egress = await startEgressProxy(
      spec.profile.allow,
      (host, port, _via, reason) => say(`sandbox: the service tried to reach ${host}:${port}; refused: ${reason}`),
      spec.tmp,
      spec.home,
    );
  }
  const ingressPort = spec.port !== null && !spec.profile.network ? spec.port : null;
  const bridged = egress !== null || ingressPort !== null;
  const staging = spec.stage ? new Staging() : null;
  const sandboxed = sandboxArgv(
    spec.profile,
    spec.cwd,
    spec.argv,
    bridged
      ? {
          egress: egress && { socket: egress.socket, insideSocket: egress.insideSocket, forwards: egress.forwards },
          ingressPort,
          node: spec.node,
          bridge: bridgeScript(),
        }
      : null,
    staging,
  );
  // As a run's (containment.ts): the clones made and the layers mounted in a mount namespace of
  // the service's own, then the rest as the sandbox's uid.
  const layers = staging && spec.stage ? spec.stage.mounts.map((m) => staging.mount(m)) : [];
  const argv = staging
    ? [
        'unshare',
        '--mount',
        '--',
        ...stageArgv(staging.sources),
        ...(layers.length > 0 ? ['unshare', '--mount', '--', ...mountArgv(layers, '')] : []),
        ...sandboxed,
      ]
    : sandboxed;
  const child = startBounded({
    argv,
    cwd: spec.cwd,
    env: process.env,
    stdin: 'ignore',
    stdout: 'inherit',
    stderr: 'inherit',
    group: false,
    channel: ingressPort !== null,
  });
  // The sandbox's processes: bwrap's PID namespace, below its first process.
  const inside = (): number[] => {
    if (child.pid === undefined) return [];
    const own = pidNamespaceOf(process.pid);
    for (const kid of childrenOf(child.pid)) {
      const ino = pidNamespaceOf(kid);
      if (ino !== null && ino !== own) return pidsInNamespace(ino);
    }
    return [];
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(sig, () => {
      for (const pid of inside()) tryKill(pid, sig);
    });
  }
  const ingress: { listener: net.Server | null } = { listener: null };
  if (ingressPort !== null && child.channel) {
    const channel = child.channel;
    channel.onMessage((message) => {
      if (message !== 'ready' || ingress.listener) return;
      const listener = net.createServer({ pauseOnConnect: true }, (socket) => channel.send('connection', socket));
      listener.on('error', (err) => {
        say(`the service's port ${ingressPort} cannot be reached from the host: ${err.message}; it is stopped`);
        child.stop();
      });
      listener.listen(ingressPort, '127.0.0.1');
      ingress.listener = listener;
    });
  }
  const result = await child.done;
  ingress.listener?.close();
  await egress?.close();
  if (result.spawnError) {
    say(`could not start the sandbox: ${result.spawnError.message}`);
    return 127;
  }
  return result.exitCode ?? 128;
}

/** Run as a program (src/cli/service-host.ts, the bundle's `service-host` entry), never on import: its exit status. */
export async function serviceHostMain(args: readonly string[], say: Say): Promise<number> {
  const [specFile] = args;
  if (!specFile) {
    say('usage: service-host SPEC');
    return 125;
  }
  try {
    return await main(specFile, say);
  } catch (err) {
    say(`the service's host could not start: ${err instanceof Error ? err.message : String(err)}`);
    return 125;
  }
}
