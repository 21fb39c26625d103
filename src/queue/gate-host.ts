import fs from 'node:fs';
import path from 'node:path';
import type { WarrenConfig } from '../config/schema.js';
import type { SandboxKind } from '../config/sandbox.js';
import { isWarrenError, WarrenError } from '../errors.js';
import { deleteRemoteRefs, pushCommits } from '../git/ssh-transfer.js';
import { DEFAULT_STEP_TIMEOUT } from '../run/commands.js';
import { logDir } from '../run/records.js';
import { gitSshCommand, gitUrl, request } from '../run/ssh/connection.js';
import { hostNamed, type Host } from '../run/ssh/hosts.js';
import { gateRef, type GateRan, type SentLog } from '../run/ssh/protocol.js';
import { readPrepared, writePrepared } from '../run/ssh/remote-records.js';
import { remoteProject } from '../run/ssh/remote-task.js';
import { assertSettingsTrusted, assertTrusted } from '../trust/trust.js';
import { parseDuration } from '../util/duration.js';
import type { ProjectContext } from '../workspace/context.js';
import { newGateId, type GateOutcome } from './gate.js';
import { gateSetupSteps } from './gate-deps.js';

/**
 * The gate of a batch whose strictest task runs on an SSH host, run on that host (gate-place.ts):
 * the integrated commit is pushed there (`refs/warren/gate/<id>`, dropped there once the gate is
 * done), and the host's warren runs `runGate` in its own repository — integration workspace,
 * the integrated lockfile's dependencies, the gate's services, the steps in the sandbox kind
 * given — with the commands this coordinator's user trusted, sent in the request: the host's
 * checkout chooses none of them. Its logs come back and are written where a gate's go here.
 * A connection lost is an error, so the gate could not run (settle.ts: nothing lands).
 */

type VerifyStep = WarrenConfig['verify'][number];

export async function runGateOnHost(
  ctx: ProjectContext,
  place: { sandbox: SandboxKind; host: string },
  commit: string,
  steps: readonly VerifyStep[],
  onStart: (gateTask: string) => void,
): Promise<GateOutcome> {
  // The commands go from here, as an SSH task's setup and verify do: only those this user trusted.
  assertTrusted(ctx, ['setup', 'verify', 'service'], 'Nothing was gated, and nothing lands.');
  assertSettingsTrusted(ctx, 'Nothing was gated, and nothing lands.');
  const home = ctx.store.home;
  const host = hostNamed(ctx, place.host);
  const project = remoteProject(ctx);
  const gate = newGateId();
  const repo = await hostRepository(ctx, host, project);
  const url = gitUrl(host, repo);
  await pushCommits(ctx.repo, url, gitSshCommand(home, host), [{ commit, ref: gateRef(gate) }]);
  onStart(gate);
  let ran: GateRan;
  try {
    ran = await request<GateRan>(
      home,
      host,
      {
        op: 'gate',
        v: 1,
        project,
        gate,
        commit,
        sandbox: place.sandbox,
        steps: [...steps],
        setup: ctx.config.setup,
        ...(ctx.config.services ? { services: ctx.config.services } : {}),
      },
      requestBound(ctx, steps),
    );
  } catch (err) {
    // The host drops the ref itself once its gate is done; one that never got the request would keep it.
    await deleteRemoteRefs(ctx.repo, url, gitSshCommand(home, host), [gateRef(gate)]).catch(() => undefined);
    if (!isWarrenError(err, 'REMOTE_FAILED')) throw err;
    // A lost connection, a host's warren that ended: the gate could not run (settle.ts bounces the batch).
    throw new WarrenError('REMOTE_FAILED', `the gate on host ${host.name} could not run: ${err.message}`, {
      hint: `Once host ${host.name} answers again, land the task again: its gate runs there again.`,
      cause: err,
    });
  }
  return {
    passed: ran.passed,
    log: writeLog(ctx, gate, ran.log),
    gateTask: gate,
    results: ran.results,
    snapshots: ran.snapshots,
    setupLog: writeLog(ctx, gate, ran.setupLog),
    setupFailed: ran.setupFailed,
  };
}

/** The coordinator's repository on the host: as remembered, else made there (`prepare`). */
async function hostRepository(ctx: ProjectContext, host: Host, project: string): Promise<string> {
  const known = readPrepared(ctx.store.home, ctx.key, host.name);
  if (known !== null) return known;
  const { repo } = await request<{ repo: string }>(ctx.store.home, host, { op: 'prepare', v: 1, project });
  writePrepared(ctx.store.home, ctx.key, host.name, repo);
  return repo;
}

const LOG_NAME = /^[A-Za-z0-9-]{1,80}-(?:setup|verify)\.log$/;

/** A log sent back, written where a gate's log goes here (`logs/<project>/<gate>/`); its path. */
function writeLog(ctx: ProjectContext, gate: string, sent: SentLog | null): string | null {
  if (sent === null) return null;
  if (!LOG_NAME.test(sent.name))
    throw new WarrenError(
      'REMOTE_FAILED',
      `the host sent a gate log named ${JSON.stringify(sent.name)}; nothing lands.`,
    );
  const file = path.join(logDir(ctx.store, ctx.key, gate), sent.name);
  fs.writeFileSync(file, sent.text, { mode: 0o600 });
  return file;
}

/** How long the request may take: every step to its timeout, twice (one other gate may hold the host's turn), and half an hour. */
function requestBound(ctx: ProjectContext, steps: readonly VerifyStep[]): number {
  const all = [...steps, ...gateSetupSteps(ctx.config.setup, true)];
  const total = all.reduce((sum, s) => sum + parseDuration(s.timeout ?? DEFAULT_STEP_TIMEOUT, `${s.id} timeout`), 0);
  return 2 * total + 30 * 60_000;
}
