import { WarrenError } from '../errors.js';
import { CLUSTER_NAME, HOST_NAME } from './names.js';

/**
 * Readers of a task's runner — warren.yaml's `runner:` or `new --runner` — apart from schema.ts
 * (which loads zod): `local` (this machine), `ssh:NAME` (a host of the user's config.yaml
 * `hosts:`) or `k8s:NAME` (a cluster of its `clusters:`). Either form names only; the host or
 * cluster itself is declared only in `$WARREN_HOME/config.yaml`, never by a repository.
 */

/** Every form of a runner. */
export const RUNNER = new RegExp(
  `^(local|k8s:${CLUSTER_NAME.source.slice(1, -1)}|ssh:${HOST_NAME.source.slice(1, -1)})$`,
);

/** `--runner` checked: the stored form, or USAGE (exit 2) before anything is opened. */
export function parseRunner(text: string): string {
  if (RUNNER.test(text)) return text;
  throw new WarrenError(
    'USAGE',
    `--runner ${JSON.stringify(text)} is not a runner warren knows; nothing was created.`,
    {
      hint: 'Use `--runner ssh:NAME` (a host of `hosts:` in $WARREN_HOME/config.yaml), `--runner k8s:NAME` (a cluster of its `clusters:`) or `--runner local`.',
    },
  );
}

/**
 * Whether a task with this runner is made on a host over SSH (`ssh:NAME`): its ports, provisioned
 * paths and services are made there by the host's own `new`, next to the code, and none here —
 * its workspace here is only the coordinator's copy of its branch.
 */
export function madeOnHost(runner: string | undefined): boolean {
  return runner?.startsWith('ssh:') === true;
}

/** The runner a new task gets: its own (`new --runner`), else warren.yaml's. */
export function runnerFor(config: { runner: string }, options: { runner?: string | undefined }): string {
  return options.runner ?? config.runner;
}
