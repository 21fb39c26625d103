/**
 * warren's exec client for a `sandbox: container` task (bundled as dist/bundle/container-exec.js):
 * the process the runner supervises on the host for one command that runs in the task's
 * container. It asks podman's API (its socket) to exec the command there under
 * bin/container-init.mjs, carries standard input in frames and the output back, and exits with
 * the command's status. Ended (a timeout, a cancel) or killed, its connection closes, and the
 * init inside ends everything of the run (bin/container-init.mjs).
 *
 *   container-exec.js SOCKET CONTAINER CWD RUN_ID NODE INIT [--ref REF COMMIT] -- CMD [ARG…]
 *
 * `--ref`: the task's branch and its commit on the host, handed to the init (which moves the
 * container's view of the branch forward to it).
 *
 * The command's environment is this process's own: the runner gave it the boundary's.
 */
import { execInContainer } from '../run/container/exec-client.js';

const args = process.argv.slice(2);
const sep = args.indexOf('--');
const [socket, container, cwd, runId, node, init, flag, ref, commit] = args.slice(0, sep);
const argv = args.slice(sep + 1);
const branch = sep === 9 && flag === '--ref' && ref && commit ? ['--ref', ref, commit] : null;
if ((sep !== 6 && branch === null) || !socket || !container || !cwd || !runId || !node || !init || argv.length === 0) {
  process.stderr.write(
    'usage: container-exec.js SOCKET CONTAINER CWD RUN_ID NODE INIT [--ref REF COMMIT] -- CMD [ARG…]\n',
  );
  process.exit(125);
}
const env = Object.entries(process.env)
  .filter((e): e is [string, string] => e[1] !== undefined)
  .map(([k, v]) => `${k}=${v}`);
const signals = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
let end: () => void = () => undefined;
// Ended (a timeout, a cancel): the connection closes, and the init inside ends the whole run.
for (const [signal, n] of Object.entries(signals)) {
  process.on(signal, () => {
    end();
    process.exit(128 + n);
  });
}
execInContainer(
  { socket, container, cwd, env, argv: [node, init, runId, ...(branch ?? []), '--', ...argv] },
  {
    stdin: process.stdin,
    stdout: (chunk) => process.stdout.write(chunk),
    stderr: (chunk) => process.stderr.write(chunk),
    attached: (close) => (end = close),
  },
).then(
  (status) => process.exit(status),
  (err: unknown) => {
    process.stderr.write(
      `warren: could not run in the task's container: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(125);
  },
);
