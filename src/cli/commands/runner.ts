import fs from 'node:fs';
import { openProject } from '../../composition.js';
import { WarrenError } from '../../errors.js';
import { exitStatusOf } from '../../run/execute.js';
import {
  hostAgentState,
  hostCheckoutBase,
  hostCommit,
  hostCreate,
  hostExec,
  hostList,
  hostPrepare,
  hostRemove,
  hostReport,
  hostWorktree,
  hostRepoDir,
} from '../ssh-host-side.js';
import { hostGate } from '../ssh-host-gate.js';
import { hostProvision, hostSnapshot } from '../ssh-host-ops.js';
import type { Listed, RemoteReply, RemoteRequest } from '../../run/ssh/protocol.js';
import { inputFromFrames } from '../../run/ssh/input.js';
import { warrenHome } from '../../state/home.js';
import { NO_OUTPUT } from '../../workspace/reporter.js';
import type { CliEnv, CommandResult, Register } from '../command.js';

/**
 * `warren runner --stdio` (hidden): the host's side of a task that runs on another machine,
 * started by the coordinator over SSH (src/run/ssh/). One request frame on stdin; a control
 * request is answered by one reply frame on stdout, `exec` by the command's own output and exit
 * status — and the end of stdin (the connection lost) ends that command, as SIGHUP would.
 */
export const registerRunner: Register = (program, run) => {
  program
    .command('runner', { hidden: true })
    .description("the host's side of a task that runs on another machine (internal; frames on stdin and stdout)")
    .requiredOption('--stdio', 'speak the coordinator protocol on stdin and stdout')
    .action(() =>
      run(async (env) => {
        const { line, rest } = await firstLine(env.io.stdin);
        let req: RemoteRequest;
        try {
          req = JSON.parse(line) as RemoteRequest;
        } catch {
          return reply(env, { ok: false, error: { code: 'USAGE', message: 'the request is not a JSON frame' } }, 2);
        }
        if (req.op === 'exec') {
          // The connection's end is the run's end: the supervisor ends the tree on SIGHUP.
          let over = false;
          const hangUp = () => {
            if (!over) process.kill(process.pid, 'SIGHUP');
          };
          // The caller's own input, when it is forwarded, follows the frame (input.ts).
          const input = req.input ? inputFromFrames(rest, hangUp) : null;
          if (!input) {
            rest.on('end', hangUp);
            rest.resume();
          }
          const ctx = await openProject(hostRepoDir(warrenHome(), req.project), {
            store: () => env.store(),
            reporter: env.reporter,
          });
          const outcome = await hostExec(ctx, req, env.reporter.output, input).finally(() => {
            // The run is over: its input, held open by the coordinator, no longer keeps this process.
            over = true;
            rest.removeListener('end', hangUp);
            (rest as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
          });
          return { data: null, human: '', exitCode: exitStatusOf(outcome) };
        }
        try {
          return reply(env, { ok: true, data: await control(env, req) }, 0);
        } catch (err) {
          if (!(err instanceof WarrenError)) throw err;
          return reply(
            env,
            { ok: false, error: { code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) } },
            err.exitCode,
          );
        }
      }),
    );
};

async function control(env: CliEnv, req: Exclude<RemoteRequest, { op: 'exec' }>): Promise<unknown> {
  const home = warrenHome();
  if (req.op === 'prepare') return hostPrepare(home, req.project);
  // A project this host never prepared has no task here (and nothing is made to say so).
  if (req.op === 'list' && !fs.existsSync(hostRepoDir(home, req.project))) return { tasks: [] } satisfies Listed;
  // `create` and `provision` read the task's own settings: the main checkout at its base first.
  const dir =
    req.op === 'create' || req.op === 'provision'
      ? await hostCheckoutBase(home, req.project, req.base)
      : hostRepoDir(home, req.project);
  // What `provision` says is sent back in its answer, for the coordinator to say.
  const lines: string[] = [];
  const reporter =
    req.op === 'provision' ? { line: (text: string) => void lines.push(text), output: NO_OUTPUT } : env.reporter;
  const ctx = await openProject(dir, { store: () => env.store(), reporter });
  switch (req.op) {
    case 'create':
      return hostCreate(ctx, req);
    case 'commit':
      return hostCommit(ctx, req);
    case 'report':
      return hostReport(ctx, req.id);
    case 'remove':
      return hostRemove(ctx, req.id);
    case 'agent-state':
      return hostAgentState(ctx, req);
    case 'worktree':
      return hostWorktree(ctx, req.id);
    case 'list':
      return hostList(ctx);
    case 'gate':
      return hostGate(ctx, req);
    case 'snapshot':
      return hostSnapshot(ctx, req.id);
    case 'provision':
      return hostProvision(ctx, req, lines);
  }
}

/** The reply frame, the one line on stdout (printed as JSON text: no control character in it). */
function reply(env: CliEnv, frame: RemoteReply, exitCode: number): CommandResult {
  return { data: frame, human: JSON.stringify(frame), exitCode };
}

/** Reads up to the first newline; the stream, paused, keeps the rest (what came with the line put back). */
function firstLine(stdin: NodeJS.ReadableStream): Promise<{ line: string; rest: NodeJS.ReadableStream }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer | string) => {
      buf = Buffer.concat([buf, typeof chunk === 'string' ? Buffer.from(chunk) : chunk]);
      const nl = buf.indexOf(0x0a);
      if (nl === -1) return;
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.pause();
      // The frames that follow (the caller's input) may come in the same chunk.
      if (nl + 1 < buf.length) stdin.unshift(buf.subarray(nl + 1));
      resolve({ line: buf.subarray(0, nl).toString(), rest: stdin });
    };
    const onEnd = () => reject(new WarrenError('USAGE', 'no request frame on stdin'));
    stdin.on('data', onData);
    stdin.once('end', onEnd);
  });
}
