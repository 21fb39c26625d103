import { composeSection } from './audit/compose-section.js';
import { checkoutBeforeRun, checkoutCreate, checkoutGc, checkoutRemove } from './checkout/checkout-steps.js';
import { gitSection } from './audit/git-section.js';
import { hooksSection } from './audit/hooks-section.js';
import { fingerprintCreate, landingRemove, projectHooksCreate } from './land/landing-steps.js';
import {
  provisionAudit,
  provisionBeforeRun,
  provisionCreate,
  provisionGc,
  provisionRemove,
} from './provision/provision-steps.js';
import { portsAudit } from './run/audit-ports.js';
import { containerCreate, containerGc, containerRemove } from './run/container/container-steps.js';
import { runnerAudit } from './run/audit-runner.js';
import { sandboxAudit } from './run/audit-sandbox.js';
import { k8sCreate, k8sGc, k8sRemove } from './run/k8s/k8s-steps.js';
import { sshCreate, sshGc, sshRemove } from './run/ssh/ssh-steps.js';
import { executionRemove, portsCreate, riskCreate, runLogsGc, setupCreate } from './run/execution-steps.js';
import { egressGc } from './run/egress-gc.js';
import { CHECKPOINT } from './land/checkpoint.js';
import { SYNC } from './conflicts/sync.js';
import { PROVISION } from './provision/operations.js';
import { QUEUE } from './queue/advance.js';
import { reviewRemove } from './review/review-steps.js';
import { SERVICE_EVENTS } from './services/events.js';
import { SERVICE_FACTS } from './services/facts.js';
import {
  servicesBeforeRun,
  servicesCreate,
  servicesGc,
  servicesReach,
  servicesRemove,
} from './services/service-steps.js';
import { servicesAfterRun } from './services/pg-sessions.js';
import type { IntentOp } from './state/intents.js';
import { CHECKOUT_EVENTS } from './checkout/events.js';
import { CONFLICT_EVENTS } from './conflicts/events.js';
import { CHECKOUT_FACTS } from './checkout/facts.js';
import { LANDING_EVENTS } from './land/events.js';
import { LANDING_FACTS } from './land/facts.js';
import { PROVISION_EVENTS } from './provision/events.js';
import { PROVISION_FACTS } from './provision/facts.js';
import { QUEUE_EVENTS } from './queue/events.js';
import { EXECUTION_EVENTS } from './run/events.js';
import { EXECUTION_FACTS } from './run/facts.js';
import { warrenHome } from './state/home.js';
import type { EventKind, Payload } from './state/events.js';
import type { FactReaders } from './state/facts.js';
import type { OpenOptions } from './state/db.js';
import type { Tightened } from './state/private-home.js';
import { Store } from './state/store.js';
import { DASHBOARD_EVENTS } from './web/events.js';
import { WORKSPACE_EVENTS } from './workspace/events.js';
import { recordMadePrivate } from './workspace/home-private.js';
import { openProjectWith, type OpenParts, type ProjectContext } from './workspace/context.js';
import { archiveGc } from './workspace/archive.js';
import { scratchIndexGc } from './workspace/scratch-gc.js';
import { NEW } from './workspace/create.js';
import { GC } from './workspace/gc.js';
import { recoverInterrupted, type AnyOperation } from './workspace/operation.js';
import type { Feature, Lifecycle } from './workspace/types.js';
import { DISCARD, RM } from './workspace/remove.js';
import { RESTORE } from './workspace/restore.js';

/**
 * warren's features, each declared once: what it makes at `new` with what undoes it (one
 * without the other does not compile: src/workspace/types.ts's Feature), what gc collects,
 * what runs before and after a command, what `warren audit` shows, what every process sees.
 */
export const FEATURES = {
  container: { create: { container: containerCreate }, remove: containerRemove, gc: { containers: containerGc } },
  k8s: { create: { k8s: k8sCreate }, remove: k8sRemove, gc: { claims: k8sGc } },
  ssh: { create: { ssh: sshCreate }, remove: sshRemove, gc: { hosts: sshGc } },
  provision: {
    create: { provision: provisionCreate },
    remove: provisionRemove,
    gc: { snapshots: provisionGc },
    beforeRun: provisionBeforeRun,
    audit: { provisioned: provisionAudit },
  },
  landing: { create: { fingerprint: fingerprintCreate, projectHooks: projectHooksCreate }, remove: landingRemove },
  execution: {
    create: { ports: portsCreate, risk: riskCreate, setup: setupCreate },
    remove: executionRemove,
    gc: { runLogs: runLogsGc, egress: egressGc },
    audit: { runner: runnerAudit, ports: portsAudit, sandbox: sandboxAudit },
  },
  services: {
    create: { services: servicesCreate },
    remove: servicesRemove,
    gc: { services: servicesGc },
    beforeRun: servicesBeforeRun,
    afterRun: servicesAfterRun,
    reach: servicesReach,
  },
  review: { remove: reviewRemove },
  checkout: {
    checkout: checkoutCreate,
    remove: checkoutRemove,
    gc: { checkouts: checkoutGc },
    beforeRun: checkoutBeforeRun,
  },
  audit: { audit: { git: gitSection, hooks: hooksSection, compose: composeSection } },
  workspace: { gc: { archives: archiveGc, scratchIndexes: scratchIndexGc } },
} satisfies Record<string, Feature>;

const F = FEATURES;

/**
 * The features' steps, in the order each lifecycle runs them. This is the one place that order
 * is decided; every command gets it through the project context. Every step of FEATURES is
 * placed here once (test/architecture.test.ts).
 */
export const LIFECYCLE: Lifecycle = {
  // `warren new`, after the worktree exists: files first (setup needs them), the shared-git
  // fingerprint before anything runs, the port block and the sandbox choice before setup.
  // Services after the port block (they take ports from it) and before setup (which sees their variables).
  // A task on another machine is made there first: its setup, like every command of it, runs there.
  create: [
    F.ssh.create.ssh,
    F.container.create.container,
    F.k8s.create.k8s,
    F.provision.create.provision,
    F.landing.create.fingerprint,
    F.execution.create.ports,
    F.execution.create.risk,
    F.services.create.services,
    F.execution.create.setup,
    F.landing.create.projectHooks,
  ],
  // `warren rm`: is it landed (for --delete-branch); teardown (which may need the cow layers)
  // before provisioning unmounts them; a cow checkout, which they sit inside, last.
  // Services after teardown (which may still use them), and before the claim of a task in a
  // cluster (they run in its pod: stopped, and checked gone there, before the pod goes).
  // A task's container after teardown (which runs in it) and before the layers it binds come off;
  // a task's claim in a cluster likewise after its teardown.
  remove: [
    F.landing.remove,
    F.execution.remove,
    F.services.remove,
    F.ssh.remove,
    F.container.remove,
    F.k8s.remove,
    F.provision.remove,
    F.review.remove,
    F.checkout.remove,
  ],
  // Services after the archives (a task's dumps go with its archive).
  gc: [
    F.execution.gc.runLogs,
    F.execution.gc.egress,
    F.provision.gc.snapshots,
    F.workspace.gc.archives,
    F.workspace.gc.scratchIndexes,
    F.checkout.gc.checkouts,
    F.services.gc.services,
    F.container.gc.containers,
    F.k8s.gc.claims,
    F.ssh.gc.hosts,
  ],
  // A cow checkout lost to a reboot is mounted again before the layers inside it.
  beforeRun: [F.checkout.beforeRun, F.provision.beforeRun, F.services.beforeRun],
  // Once a run's processes are gone: the database sessions it left (src/services/pg-sessions.ts).
  afterRun: [F.services.afterRun],
  // `warren audit`: where it runs and what holds it (every runner), git sharing and hooks, then what was provisioned, ports, what a sandboxed command sees, compose binds.
  audit: [
    F.execution.audit.runner,
    F.audit.audit.git,
    F.audit.audit.hooks,
    F.provision.audit.provisioned,
    F.execution.audit.ports,
    F.execution.audit.sandbox,
    F.audit.audit.compose,
  ],
  // What every process of a task sees and may reach of the features: its services' variables and ports.
  reach: [F.services.reach],
  // `checkout: cow | auto` in warren.yaml: a copy-on-write checkout in place of `git worktree add`.
  checkout: F.checkout.checkout,
};

/**
 * Every multi-step operation, by the name its intent records: what the runner repairs after a
 * crash (src/workspace/operation.ts), and what the crash test kills at, step by step.
 */
export const OPERATIONS = {
  new: NEW,
  restore: RESTORE,
  rm: RM,
  discard: DISCARD,
  checkpoint: CHECKPOINT,
  queue: QUEUE,
  provision: PROVISION,
  gc: GC,
  sync: SYNC,
} satisfies Record<IntentOp, AnyOperation>;

/** How each key of a task's facts is read: every feature's readers, one per key. */
export const FACT_READERS = {
  ...PROVISION_FACTS,
  ...LANDING_FACTS,
  ...EXECUTION_FACTS,
  ...CHECKOUT_FACTS,
  ...SERVICE_FACTS,
} satisfies FactReaders;

/** Every kind of event, at run time (a test holds the dashboard's readers to it). */
export const EVENT_KINDS = Object.keys({
  ...WORKSPACE_EVENTS,
  ...LANDING_EVENTS,
  ...QUEUE_EVENTS,
  ...EXECUTION_EVENTS,
  ...PROVISION_EVENTS,
  ...CHECKOUT_EVENTS,
  ...SERVICE_EVENTS,
  ...CONFLICT_EVENTS,
  ...DASHBOARD_EVENTS,
} satisfies Record<EventKind, Payload<unknown>>) as EventKind[];

export interface StoreOptions extends OpenOptions {
  /** Told, once, what of WARREN_HOME was made private as it opened (the line the command line prints); also an event. */
  onNotice?: (message: string) => void;
}

/** The state under `home` (default `$WARREN_HOME`), read with every feature's facts. */
export function openStore(home: string = warrenHome(), options: StoreOptions = {}): Store {
  let changed: readonly Tightened[] = [];
  const store = new Store(home, FACT_READERS, { ...options, onPrivate: (c) => (changed = c) });
  if (changed.length > 0) options.onNotice?.(`warren: warn: ${recordMadePrivate(store, changed)}`);
  return store;
}

/**
 * Opens a repository as every warren command does: with warren's own lifecycle, after repairing
 * any operation on it whose warren was killed half way.
 */
export async function openProject(dir: string, parts: Partial<OpenParts> = {}): Promise<ProjectContext> {
  const ctx = await openProjectWith(dir, { lifecycle: LIFECYCLE, store: () => openStore(), ...parts });
  await recoverInterrupted(ctx, OPERATIONS);
  return ctx;
}
