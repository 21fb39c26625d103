import fs from 'node:fs';
import path from 'node:path';
import { parseSandboxKind } from '../config/sandbox.js';
import type { WarrenConfig } from '../config/schema.js';
import { WarrenError } from '../errors.js';
import { dropRef, hasCommit } from '../git/ssh-transfer.js';
import { gateRemovals, removeStaleGates, runGate } from '../queue/gate.js';
import { logDir } from '../run/records.js';
import { removeTree } from '../system/remove-tree.js';
import { gateRef, type GateRan, type GateRequest, type SentLog } from '../run/ssh/protocol.js';
import { acquireWaiting } from '../util/lockfile.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * The host's side of `gate` (src/queue/gate-host.ts is the coordinator's): the merge queue's
 * gate run here by `runGate`, as the coordinator would run it, on the commit it pushed to
 * `refs/warren/gate/<id>`, with the commands it sent — setup, verify and services are the
 * coordinator's trusted ones, never this checkout's (its settings still are checked before each
 * command, as for every command a coordinator sends). Gates of a project here take turns: the one
 * whose turn it is first removes what a gate cut off left (an integration workspace this
 * warren's ledger names, its ref). After the gate: its workspace, ref and logs here gone; its
 * logs go back in the answer.
 */

const GATE_ID = /^queue-[a-z0-9]{1,16}-\d{1,10}-\d{1,10}$/;
const COMMIT = /^[0-9a-f]{40,64}$/;
/** The end of a log longer than this is sent back (the start is said to be cut). */
const MAX_LOG = 8 * 1024 * 1024;
/** How long a gate waits for another gate of the project here to finish. */
const TURN_WAIT_MS = 2 * 60 * 60_000;

export async function hostGate(ctx: ProjectContext, req: GateRequest): Promise<GateRan> {
  if (!GATE_ID.test(req.gate) || !COMMIT.test(req.commit))
    throw new WarrenError(
      'USAGE',
      `${JSON.stringify(req.gate)} at ${JSON.stringify(req.commit)} is not a gate a coordinator sends; nothing was run.`,
    );
  const sandbox = parseSandboxKind(req.sandbox);
  const gateCtx: ProjectContext = { ...ctx, config: await coordinatorCommands(ctx.config, req) };
  if ((await hasCommit(ctx.repo.root, gateRef(req.gate))) !== req.commit)
    throw new WarrenError(
      'BASE_UNKNOWN',
      `commit ${req.commit.slice(0, 12)} was not sent here for gate ${req.gate}; nothing was run.`,
    );
  const turn = await acquireWaiting(
    path.join(ctx.store.home, 'locks', ctx.key, 'gate.lock'),
    `merge queue gate ${req.gate} (for the coordinator)`,
    TURN_WAIT_MS,
  );
  if (!turn.ok) {
    await dropRef(ctx.repo.root, gateRef(req.gate));
    throw new WarrenError(
      'LOCK_TIMEOUT',
      `another gate of this project held the host for over ${TURN_WAIT_MS / 60_000} minutes; nothing was run.`,
    );
  }
  try {
    await collectCutOff(ctx);
    const outcome = await runGate(gateCtx, req.commit, gateCtx.config.verify, sandbox, () => undefined, {
      id: req.gate,
      trustedBy: 'coordinator',
    });
    const ran: GateRan = {
      passed: outcome.passed,
      results: outcome.results,
      snapshots: outcome.snapshots,
      setupFailed: outcome.setupFailed,
      log: sentLog(outcome.log),
      setupLog: sentLog(outcome.setupLog),
    };
    // Its logs are the coordinator's now (written there where a gate's go).
    removeTree(logDir(ctx.store, ctx.key, req.gate), { inside: ctx.store.home });
    return ran;
  } finally {
    await gateRemovals();
    await dropRef(ctx.repo.root, gateRef(req.gate));
    turn.lock.release();
  }
}

/** This host's configuration with the coordinator's commands in place of its checkout's (checked as warren.yaml's are). */
async function coordinatorCommands(config: WarrenConfig, req: GateRequest): Promise<WarrenConfig> {
  // Loaded here: zod is ~60 ms of a start-up, and only a gate sent by a coordinator needs it (test/cli/start-up.test.ts).
  const { configSchema } = await import('../config/schema.js');
  const sent = configSchema.safeParse({ setup: req.setup, verify: req.steps, services: req.services });
  if (!sent.success)
    throw new WarrenError(
      'USAGE',
      `the commands the coordinator sent for gate ${req.gate} are not valid (${sent.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}); nothing was run.`,
    );
  const { services: _theirs, ...rest } = config;
  const { setup, verify, services } = sent.data;
  return { ...rest, setup, verify, ...(services ? { services } : {}) };
}

/** What a gate cut off here left (its warren killed): its workspace, as the ledger names it, and its ref. */
async function collectCutOff(ctx: ProjectContext): Promise<void> {
  const left = ctx.store
    .madePaths(ctx.key)
    .filter((m) => m.kind === 'integration' && m.taskId !== null)
    .map((m) => m.taskId ?? '');
  await removeStaleGates(ctx);
  for (const id of left) if (GATE_ID.test(id)) await dropRef(ctx.repo.root, gateRef(id));
}

function sentLog(file: string | null): SentLog | null {
  if (file === null) return null;
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r');
  try {
    const length = Math.min(size, MAX_LOG);
    const buf = Buffer.alloc(length);
    fs.readSync(fd, buf, 0, length, size - length);
    const cut = size > MAX_LOG ? `[the first ${size - MAX_LOG} bytes of this log were left on the host]\n` : '';
    return { name: path.basename(file), text: cut + buf.toString('utf8') };
  } finally {
    fs.closeSync(fd);
  }
}
