import type { Register } from '../command.js';
import { registerAudit } from './audit.js';
import { registerCheckpoint } from './checkpoint.js';
import { registerGc } from './gc.js';
import { registerHook, registerHooks } from './hooks.js';
import { registerLand } from './land.js';
import { registerQueue } from './queue.js';
import { registerList } from './list.js';
import { registerMcp } from './mcp.js';
import { registerNew } from './new.js';
import { registerProvision } from './provision.js';
import { registerRm } from './rm.js';
import { registerScan } from './scan.js';
import { registerServe } from './serve.js';
import { registerRemoved } from './removed.js';
import { registerShow } from './show.js';
import { registerExec } from './exec.js';
import { registerPolicy } from './policy.js';
import { registerRun } from './run.js';
import { registerTranscript } from './transcript.js';
import { registerSetup, registerVerify } from './setup.js';
import { registerStatus } from './status.js';
import { registerTrust } from './trust.js';
import { registerDiff } from './diff.js';
import { registerComment, registerComments } from './comment.js';
import { registerConflicts } from './conflicts.js';
import { registerSync } from './sync.js';
import { registerPath } from './path.js';
import { registerEnv, registerService } from './service.js';
import { registerRestore } from './restore.js';
import { registerCompletion } from './completion.js';
import { registerHelp } from './help.js';
import { registerRunner } from './runner.js';

/** Every command, in the order `--help` lists them. */
export const COMMANDS: readonly Register[] = [
  registerNew,
  registerList,
  registerShow,
  registerPath,
  registerEnv,
  registerStatus,
  registerDiff,
  registerRm,
  registerRestore,
  registerScan,
  registerGc,
  registerProvision,
  registerExec,
  registerService,
  registerRun,
  registerTranscript,
  registerComment,
  registerComments,
  registerSetup,
  registerVerify,
  registerTrust,
  registerCheckpoint,
  registerConflicts,
  registerSync,
  registerLand,
  registerQueue,
  registerAudit,
  registerPolicy,
  registerServe,
  registerMcp,
  registerHooks,
  registerHook,
  registerCompletion,
  registerHelp,
  registerRemoved,
  registerRunner,
];

// What the command line's entry (src/cli/bin.ts) loads, in one import: two (this list and
// src/cli/main.ts) split the shared code into more chunks.
export { main, prepareMain } from '../main.js';
