import fs from 'node:fs';
import path from 'node:path';
import type { Task } from '../../state/types.js';
import { writeFileAtomic } from '../../util/atomic.js';
import { isInside } from '../../util/paths.js';
import type { ProjectContext } from '../../workspace/context.js';
import { pickEnv } from '../declared-env.js';
import type { RunRequest } from '../execute.js';
import { request } from './connection.js';
import type { Host } from './hosts.js';
import type { AgentFrame, AgentState } from './protocol.js';
import type { RemoteRecord } from './remote-records.js';

/**
 * The coordinator's half of `warren run` of a task on another machine. The agent runs there,
 * through the host's own runner, with its state folder, final-result marker and prompt file on
 * the host's paths (host-agent.ts places them); what reaches its model (the AGENT_ENV variables)
 * is sent with the run, as a sandboxed agent is given them here. After the run, how it ended
 * (after its final result, with leftovers) and its transcript come back, the transcript into
 * the task's state folder here, so `warren transcript`, `show` and `--resume` read it as a local
 * run's.
 */

/** The `agent` part of an `exec` frame, for an agent's run; undefined for any other. */
export function agentFrame(request: RunRequest, runId: string): AgentFrame | undefined {
  const final = request.final;
  if (request.kind !== 'agent' || !final) return undefined;
  const passEnv = [...(request.passEnv ?? [])];
  return {
    name: final.agent,
    run: runId,
    home: final.home ?? null,
    done: final.file,
    graceMs: final.graceMs,
    passEnv,
    values: pickEnv(process.env, passEnv),
    ...(final.promptFile
      ? { prompt: { file: final.promptFile, text: fs.readFileSync(final.promptFile, 'utf8') } }
      : {}),
  };
}

/**
 * After an agent's run on the host: how it ended there and its transcript, copied into the
 * task's state folder here. Unreadable (the connection lost, the host's warren older): said as
 * `remote.agent_unfetched`, and the run stands as its exit status says.
 */
export async function agentFromHost(
  ctx: ProjectContext,
  task: Task,
  host: Host,
  record: RemoteRecord,
  req: RunRequest,
  runId: string,
): Promise<Pick<AgentState, 'endedAfterFinal' | 'leftovers'>> {
  const final = req.final;
  if (req.kind !== 'agent' || !final) return { endedAfterFinal: false, leftovers: [] };
  let state: AgentState;
  try {
    state = await request<AgentState>(ctx.store.home, host, {
      op: 'agent-state',
      v: 1,
      project: record.project,
      id: task.id,
      agent: final.agent,
      run: runId,
    });
    if (state.transcript && final.home) copyTranscript(final.home, state.transcript);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const message = `${final.agent} ran on host ${host.name}, but how it ended and its transcript could not be read back: ${reason}`;
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'remote.agent_unfetched',
      level: 'warn',
      message,
      data: { host: host.name, runId, agent: final.agent, reason },
    });
    ctx.reporter.line(`warren: warn: ${message}`);
    return { endedAfterFinal: false, leftovers: [] };
  }
  if (state.leftovers.length > 0) {
    ctx.store.addEvent({
      project: ctx.key,
      taskId: task.id,
      kind: 'agent.leftover',
      level: 'warn',
      message: `${final.agent} gave its final result on host ${host.name}, but processes it left kept it running (${state.leftovers.slice(0, 5).join(', ')}); warren ended them there`,
      data: { runId, agent: final.agent, processes: state.leftovers.slice(0, 100), graceMs: final.graceMs },
    });
  }
  return { endedAfterFinal: state.endedAfterFinal, leftovers: state.leftovers };
}

/** The host's transcript at the same place under the state folder here: a plain relative path, never out of it. */
function copyTranscript(home: string, transcript: NonNullable<AgentState['transcript']>): void {
  const parts = transcript.file.split('/');
  if (path.isAbsolute(transcript.file) || parts.some((p) => p === '' || p === '.' || p === '..'))
    throw new Error(
      `the host named its transcript ${JSON.stringify(transcript.file)}, not a path under the state folder`,
    );
  const dest = path.join(home, ...parts);
  fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
  // The folder is warren's alone here; still, a link in it is not followed out.
  if (!isInside(fs.realpathSync(home), fs.realpathSync(path.dirname(dest))))
    throw new Error(`${path.dirname(dest)} leads out of the agent's state folder`);
  writeFileAtomic(dest, transcript.text, { mode: 0o600 });
}
