/**
 * warren as a library: every operation the CLI offers, the same calls the CLI and the dashboard
 * make. Open a repository with `openProject` (warren's own lifecycle: provisioning, landing,
 * execution, audit), then call the operations with the context it returns. Library code never
 * writes to a terminal: pass a `reporter` to hear progress and see commands' output.
 */
export { WarrenError, ERROR_CODES, isWarrenError, type ErrorCode } from './errors.js';
export { Store } from './state/store.js';
export type { Task, TaskState, TaskType, TaskFacts, WarrenEvent, EventKind, EventPayloads } from './state/types.js';

export { EVENT_KINDS, FACT_READERS, LIFECYCLE, openProject, openStore } from './composition.js';
export { openProjectWith, type ProjectContext, type OpenParts } from './workspace/context.js';
export {
  BARE_LIFECYCLE,
  type Lifecycle,
  type CreateStep,
  type RemoveStep,
  type GcStep,
  type BeforeRunStep,
  type AuditSection,
} from './workspace/types.js';
export { SILENT, reportStep, startStep, type Reporter, type RunOutput, type StepReport } from './workspace/reporter.js';
// Workspaces
export { createTask, type CreateOptions } from './workspace/create.js';
export { removeTask, type RemoveOptions, type RemoveResult } from './workspace/remove.js';
export { listTasks, requireTask, showTask, taskPath } from './workspace/tasks.js';
export { restoreTask, type RestoreOptions } from './workspace/restore.js';
export { listArchives, ARCHIVE_PREFIX, type Archive } from './workspace/archive.js';
export { scan, classifyStrays, type Stray } from './workspace/scan.js';
export { gc, planGc } from './workspace/gc.js';
export { loadConfig, parseConfig } from './config/load.js';
// Execution
export { execTask, runAgent, type ExecOptions, type AgentOptions, type AgentOutcome } from './run/operations.js';
export {
  installClaudeHooks,
  parseCreatePayload,
  parseRemovePayload,
  type HooksInstallResult,
} from './run/claude-hooks.js';
export { exitStatusOf, type RunOutcome } from './run/execute.js';
export { setupTask, verifyTask, type SetupOutcome, type VerifyOutcome } from './run/setup-verify.js';
// Provisioning
export { provisionTask, statusTask, type ProvisionOutcome } from './provision/operations.js';
export { ensureMounted } from './provision/task-mounts.js';
export { taskStatus, type TaskStatus } from './provision/status/status.js';
export { provisionRecords, type ProvisionRecord } from './provision/types.js';
// Landing
export { checkpointTask, type CheckpointOptions, type CheckpointResult } from './land/checkpoint.js';
export { type LandOptions, type LandResult } from './land/land.js';
// Every land that moves a base goes through the merge queue and its gate.
export { landTask, queueLand, listQueue, leaveQueue, type QueueLandResult } from './queue/operations.js';
export { auditTask, type AuditReport } from './audit/run.js';
// MCP (loads @modelcontextprotocol/sdk)
export { buildServer as buildMcpServer, serveMcp, type McpOptions } from './mcp/server.js';
// Review
export { diffTask, type DiffOptions, type DiffScope, type DiffFile, type TaskDiff } from './review/diff.js';
export { addComment, listComments, setCommentState, type Comment, type NewComment } from './review/comments.js';
export { sendReview, type ReviewOptions, type ReviewOutcome } from './review/send.js';
export { reviewPrompt } from './review/prompt.js';
// Dashboard
export { startServer, type ServeOptions, type RunningServer } from './web/server.js';
export { keygen as policyKeygen, signPolicy, verifyPolicyFile, loadVerifiedPolicy } from './run/policy.js';
