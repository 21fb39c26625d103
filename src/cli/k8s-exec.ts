/**
 * warren's exec client for a `runner: k8s:NAME` task (bundled as dist/bundle/k8s-exec.js): the
 * process the runner supervises on the host for one command that runs in the task's pod. It
 * execs the command through the cluster's API server (client-node's `Exec`: a websocket), carries
 * standard input in frames that bin/container-init.mjs reads there, the output back, and exits
 * with the command's status. Ended (a timeout, a cancel) or killed, its connection closes, and
 * the init inside ends everything of the run.
 *
 *   k8s-exec.js KUBECONFIG CONTEXT|- NAMESPACE POD -- CMD [ARG…]
 */
import { PassThrough } from 'node:stream';
import { Exec, KubeConfig, type V1Status } from '@kubernetes/client-node';
import { CONTAINER, exitOf } from '../run/k8s/cluster.js';

const args = process.argv.slice(2);
const sep = args.indexOf('--');
const [kubeconfig, context, namespace, pod] = args.slice(0, sep);
const argv = args.slice(sep + 1);
if (sep !== 4 || !kubeconfig || !context || !namespace || !pod || argv.length === 0) {
  process.stderr.write('usage: k8s-exec.js KUBECONFIG CONTEXT|- NAMESPACE POD -- CMD [ARG…]\n');
  process.exit(125);
}
const config = new KubeConfig();
config.loadFromFile(kubeconfig);
if (context !== '-') config.setCurrentContext(context);

// Standard input in frames (4-byte length, then bytes; an empty frame is its end). The stream
// given to Exec never ends by itself: its end would close the connection, which ends the run.
const input = new PassThrough();
const frame = (data: Buffer): Buffer => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length, 0);
  return Buffer.concat([head, data]);
};
process.stdin.on('data', (chunk: Buffer) => input.write(frame(chunk)));
process.stdin.on('end', () => input.write(frame(Buffer.alloc(0))));
process.stdin.on('error', () => input.write(frame(Buffer.alloc(0))));

let status: V1Status | null = null;
let close: () => void = () => undefined;
for (const [signal, n] of Object.entries({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 })) {
  process.on(signal, () => {
    close();
    process.exit(128 + n);
  });
}
new Exec(config)
  .exec(namespace, pod, CONTAINER, argv, process.stdout, process.stderr, input, false, (s) => (status = s))
  .then(
    (ws) => {
      close = () => ws.terminate();
      ws.on('close', () => process.exit(exitOf(status)));
      ws.on('error', (err: Error) => {
        process.stderr.write(`warren: the connection to the task's pod failed: ${err.message}\n`);
        process.exit(125);
      });
    },
    (err: unknown) => {
      process.stderr.write(
        `warren: could not run in the task's pod: ${err instanceof Error ? err.message : String(err)}\n`,
      );
      process.exit(125);
    },
  );
