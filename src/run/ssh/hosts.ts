import type { HostConfig } from '../../config/user-schema.js';
import { WarrenError } from '../../errors.js';
import type { Task } from '../../state/types.js';
import type { ProjectContext } from '../../workspace/context.js';

/** A host a task runs on: its name in `hosts:` and how to reach it. */
export interface Host extends HostConfig {
  name: string;
}

const PREFIX = 'ssh:';

/** The host's name when the task runs on another machine; null when it runs here. */
export function remoteHostName(task: Pick<Task, 'data'>): string | null {
  return sshHostOf(task.data.runner);
}

/** The host a runner (`ssh:NAME`) names, or null. */
export function sshHostOf(runner: string | undefined): string | null {
  return runner?.startsWith(PREFIX) ? runner.slice(PREFIX.length) : null;
}

/** The user's declaration of host NAME, or HOST_UNKNOWN (exit 2): only `$WARREN_HOME/config.yaml` declares one. */
export function hostNamed(ctx: Pick<ProjectContext, 'user'>, name: string): Host {
  const declared = ctx.user.hosts?.[name];
  if (!declared) {
    const known = Object.keys(ctx.user.hosts ?? {});
    throw new WarrenError(
      'HOST_UNKNOWN',
      `no host ${JSON.stringify(name)} is declared in $WARREN_HOME/config.yaml (hosts: ${known.length > 0 ? known.join(', ') : 'none'}); nothing was changed.`,
      {
        hint: 'Declare it under `hosts:` in $WARREN_HOME/config.yaml (a repository cannot): `warren help configuration`.',
      },
    );
  }
  return { name, ...declared };
}

/** The host of a task that runs elsewhere, or null. */
export function taskHost(ctx: Pick<ProjectContext, 'user'>, task: Pick<Task, 'data'>): Host | null {
  const name = remoteHostName(task);
  return name === null ? null : hostNamed(ctx, name);
}
