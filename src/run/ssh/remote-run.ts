import type { Task } from '../../state/types.js';
import type { SuperviseResult } from '../supervisor.js';
import type { RunRequest } from '../execute.js';
import { clientArgv, connect, remoteWarren } from './connection.js';
import type { Host } from './hosts.js';
import type { RemoteRecord } from './remote-records.js';
import type { RemoteRequest } from './protocol.js';
import { agentFrame } from './remote-agent.js';
import { inputFrames } from './input.js';

/**
 * The runner's SSH half (src/run/execute.ts supervises what it returns): the argv of a client of
 * the host's connection that runs the host's `warren runner --stdio`, and the request it is sent.
 */

/** The ssh client's argv, the host's connection up first (a master never starts inside a run). */
export async function hostRunArgv(home: string, host: Host, task: Task): Promise<string[]> {
  await connect(home, host, `task ${task.id}`);
  return clientArgv(home, host, remoteWarren(host, ['runner', '--stdio']));
}

/** The `exec` frame, one line: the workspace's path here in the command's words becomes its path there. */
export function hostRunFrame(task: Task, record: RemoteRecord, request: RunRequest, runId: string): string {
  const agent = agentFrame(request, runId);
  const there = record.path ?? task.path;
  const moved = (s: string): string =>
    s === task.path || s.startsWith(`${task.path}/`) ? there + s.slice(task.path.length) : s;
  const frame: RemoteRequest = {
    op: 'exec',
    v: 1,
    project: record.project,
    id: task.id,
    kind: request.kind,
    label: request.label,
    argv: request.argv.map(moved),
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    ...(request.env ? { env: Object.fromEntries(Object.entries(request.env).map(([k, v]) => [k, moved(v)])) } : {}),
    ...(typeof request.stdin === 'object' && 'text' in request.stdin ? { stdin: request.stdin.text } : {}),
    ...(forwardsInput(request) ? { input: true } : {}),
    ...(agent ? { agent } : {}),
  };
  return `${JSON.stringify(frame)}\n`;
}

/** The run's own input goes to the host as it comes (input.ts): this process's stdin, or a stream. */
function forwardsInput(request: RunRequest): boolean {
  return request.stdin === 'inherit' || (typeof request.stdin === 'object' && 'stream' in request.stdin);
}

/** The frames of the run's own input, to follow its `exec` frame; `stop` once the run is over. Null: none is forwarded. */
export function hostRunInput(request: RunRequest): ReturnType<typeof inputFrames> | null {
  if (!forwardsInput(request)) return null;
  return inputFrames(
    typeof request.stdin === 'object' && 'stream' in request.stdin ? request.stdin.stream : process.stdin,
  );
}

/** ssh's own failure (exit 255), not the command's and not a timeout or cancel here: the connection was lost. */
export function lostConnection(result: SuperviseResult, host: Host): string | null {
  if (result.exitCode !== 255 || result.timedOut || result.canceledBy !== null) return null;
  return `the connection to host ${host.name} was lost (ssh exit 255), or the host's warren was ended; what the run committed there is fetched back by the task's next command`;
}
