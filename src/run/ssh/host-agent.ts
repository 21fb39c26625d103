import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { writeFileAtomic } from '../../util/atomic.js';
import type { ProjectContext } from '../../workspace/context.js';
import { agentHome, codexSessionSince } from '../agent-home.js';
import { RESUMABLE, type ResumableAgent } from '../agents.js';
import type { RunOutcome, RunRequest } from '../execute.js';
import { seedTaskAgentHome } from '../operations.js';
import { logDir } from '../records.js';
import { taskTmp } from '../task-tmp.js';
import { transcriptFile } from '../transcript.js';
import type { AgentFrame, AgentState } from './protocol.js';

/**
 * The host's half of `warren run` of a coordinator's task (remote-agent.ts is the coordinator's):
 * the agent's state folder, final-result marker and prompt file are the host's own — in its
 * WARREN_HOME, as for a task of its own, the folder seeded from its user's login and settings —
 * put where the coordinator's paths were in the command line and environment; the run goes
 * through the host's runner with the final-result watch there. How it ended is kept beside the
 * task's TMPDIR until the coordinator asks (`agent-state`).
 */

const RUN = /^[A-Za-z0-9-]{1,64}$/;
/** A transcript larger than this is not sent back (the run stands; `warren transcript` says none was written). */
const MAX_TRANSCRIPT = 64 * 1024 * 1024;

interface Ended {
  endedAfterFinal: boolean;
  leftovers: string[];
  session: string | null;
}

export interface PlacedAgent {
  /** What the run request gets instead of the coordinator's argv, env and agent paths. */
  request: Pick<RunRequest, 'argv' | 'env' | 'passEnv' | 'writable' | 'final'>;
  /** After the run: how it ended kept for the coordinator, and the outcome as the coordinator's exit status tells it. */
  finish(outcome: RunOutcome, startedMs: number): RunOutcome;
}

function checkedRun(run: string): string {
  if (!RUN.test(run)) throw new WarrenError('USAGE', `${JSON.stringify(run)} is not a run a coordinator names.`);
  return run;
}

function resumable(name: string): ResumableAgent | null {
  return (RESUMABLE as readonly string[]).includes(name) ? (name as ResumableAgent) : null;
}

const endedFile = (ctx: ProjectContext, id: string, run: string): string =>
  path.join(taskTmp(ctx.store, ctx.key, id), `.warren-agent-ended-${checkedRun(run)}.json`);

export function placeAgent(
  ctx: ProjectContext,
  id: string,
  frame: AgentFrame,
  argv: readonly string[],
  env: Record<string, string>,
): PlacedAgent {
  checkedRun(frame.run);
  const kept = resumable(frame.name);
  if (frame.home !== null && kept === null)
    throw new WarrenError('USAGE', `${JSON.stringify(frame.name)} is not an agent that keeps a state folder.`);
  const home = frame.home !== null && kept !== null ? agentHome(ctx.store, ctx.key, id, kept) : null;
  // With the coordinator's variables the agent is given (its model's key): gemini's auth choice is seeded from them.
  if (home !== null && kept !== null) seedTaskAgentHome(ctx, id, kept, home, { ...process.env, ...frame.values });
  const done = path.join(taskTmp(ctx.store, ctx.key, id), `.warren-agent-done-${frame.run}`);
  const prompt = frame.prompt ? path.join(logDir(ctx.store, ctx.key, id), `${frame.run}-prompt.txt`) : null;
  if (frame.prompt && prompt) fs.writeFileSync(prompt, frame.prompt.text, { mode: 0o600 });
  // The coordinator's paths, by the host's own: exactly, or (the state folder) a path under it.
  const here = (s: string): string => {
    if (s === frame.done) return done;
    if (frame.prompt && s === frame.prompt.file && prompt) return prompt;
    if (frame.home !== null && home !== null && (s === frame.home || s.startsWith(`${frame.home}/`)))
      return home + s.slice(frame.home.length);
    return s;
  };
  const placedEnv = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, here(v)]));
  return {
    request: {
      argv: argv.map(here),
      // The user's variables that reach its model (sent by the coordinator), under the run's own.
      env: { ...frame.values, ...placedEnv },
      passEnv: frame.passEnv,
      writable: home === null ? [] : [home],
      final: { file: done, graceMs: frame.graceMs, agent: frame.name, ...(home === null ? {} : { home }) },
    },
    finish(outcome, startedMs) {
      fs.rmSync(done, { force: true });
      const session =
        kept === null || home === null
          ? null
          : kept === 'codex'
            ? codexSessionSince(home, startedMs)
            : namedSession(argv);
      const ended: Ended = { endedAfterFinal: outcome.endedAfterFinal, leftovers: outcome.leftovers, session };
      writeFileAtomic(endedFile(ctx, id, frame.run), `${JSON.stringify(ended)}\n`, { mode: 0o600 });
      // Its work done, ended by this warren after the grace: the coordinator's exit status is 0, as a local run's.
      return outcome.endedAfterFinal ? { ...outcome, exitCode: 0, signal: null } : outcome;
    },
  };
}

/** The session claude and gemini were given on their command line (`--session-id`, `--resume`). */
function namedSession(argv: readonly string[]): string | null {
  const at = argv.findIndex((a) => a === '--session-id' || a === '--resume');
  return at >= 0 ? (argv[at + 1] ?? null) : null;
}

/** `agent-state`: how the coordinator's run `run` of agent `agent` ended here, and its transcript (taken once). */
export function agentState(ctx: ProjectContext, id: string, agent: string, run: string): AgentState {
  const file = endedFile(ctx, id, run);
  let ended: Ended = { endedAfterFinal: false, leftovers: [], session: null };
  try {
    ended = JSON.parse(fs.readFileSync(file, 'utf8')) as Ended;
  } catch {
    // Not written: the run did not get that far here; it ended as its exit status says.
  }
  fs.rmSync(file, { force: true });
  const kept = resumable(agent);
  const found =
    kept !== null && ended.session !== null
      ? transcriptFile(kept, agentHome(ctx.store, ctx.key, id, kept), ended.session)
      : null;
  let transcript: AgentState['transcript'] = null;
  if (found !== null && kept !== null) {
    const home = agentHome(ctx.store, ctx.key, id, kept);
    const fd = fs.openSync(found, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      if (fs.fstatSync(fd).size <= MAX_TRANSCRIPT)
        transcript = { file: path.relative(home, found), text: fs.readFileSync(fd, 'utf8') };
    } finally {
      fs.closeSync(fd);
    }
  }
  return { endedAfterFinal: ended.endedAfterFinal, leftovers: ended.leftovers, session: ended.session, transcript };
}
