import { payload, type PayloadsOf } from '../state/events.js';
import type { Drift } from './fingerprint.js';
import type { Exclusion } from '../config/protected.js';
import type { PushOutcome } from './push.js';

/** Landing's events: lands, pushes, the shared-git fingerprint, checkpoints. */
export const LANDING_EVENTS = {
  'task.landed': payload<{
    commit: string;
    tree: string;
    baseBefore: string;
    excluded: string[];
    rebased: boolean;
    checkout: string | null;
  }>(),
  'land.excluded': payload<{ excluded: Exclusion[]; commit: string }>(),
  'land.settings_changed': payload<{ changed: string[]; commit: string }>(),
  /** A landed change touched a lockfile: what is installed in the checkout of the base is stale. */
  'land.deps_stale': payload<{ lockfiles: string[]; checkout: string; commit: string }>(),
  'land.pushed': payload<PushOutcome>(),
  'land.push_failed': payload<PushOutcome>(),
  'fingerprint.recorded': payload<{ hooksDir: string; hooksPath: string | null; hooks: string[] }>(),
  'fingerprint.config_changed': payload<{ drift: Drift }>(),
  'fingerprint.accepted': payload<{ drift: Drift }>(),
  'hooks.missing': payload<{ hooksPath: string; hooksDir: string }>(),
  /** The project's own setup at `new` set a core.hooksPath it generated in the workspace (husky): the task's new baseline. */
  'hooks.project_own': payload<{ hooksPath: string; hooksDir: string; drift: string[] }>(),
  checkpoint: payload<{ commit: string }>(),
  'checkpoint.nothing': payload<{ head: string }>(),
  /** `checkpoint --no-verify`: the pre-commit and commit-msg hooks did not run. */
  'checkpoint.no_verify': payload<Record<string, never>>(),
  'checkpoint.unstaged_provisioned': payload<{ paths: string[] }>(),
  /** A commit hook of the main checkout that is there but not executable: skipped, as git skips it. */
  'checkpoint.hook_ignored': payload<{ hook: string; file: string }>(),
  /** A commit hook that could not be started after the commit was made (post-commit). */
  'checkpoint.hook_not_run': payload<{ hook: string }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof LANDING_EVENTS> {}
}
