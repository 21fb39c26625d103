/** warren as a library: the same calls the CLI and the dashboard make. */
import './features.js';
export { WarrenError, ERROR_CODES, isWarrenError, type ErrorCode } from './errors.js';
export { Store } from './state/store.js';
export type { Task, TaskState, TaskType, WarrenEvent } from './state/types.js';
export { openProject, type ProjectContext } from './workspace/context.js';
export { createTask, type CreateOptions } from './workspace/create.js';
export { removeTask, type RemoveOptions, type RemoveResult } from './workspace/remove.js';
export { scan, classifyStrays, type Stray } from './workspace/scan.js';
export { gc, planGc } from './workspace/gc.js';
export { loadConfig, parseConfig } from './config/load.js';
export { checkpointTask, type CheckpointOptions, type CheckpointResult } from './land/checkpoint.js';
export { landTask, type LandOptions, type LandResult } from './land/land.js';
export { auditTask, type AuditReport } from './audit/run.js';
export { startServer, type ServeOptions, type RunningServer } from './web/server.js';
export { provisionTask } from './provision/provision.js';
export { ensureMounted } from './provision/lifecycle.js';
export { taskStatus, type TaskStatus } from './provision/status.js';
export { provisionRecords, type ProvisionRecord } from './provision/types.js';
