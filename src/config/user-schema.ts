import { z } from 'zod';
import { CLUSTER_NAME, HOST_NAME } from './names.js';
import { pgLimits } from './schema.js';

/**
 * `$WARREN_HOME/config.yaml`: the user's own settings, which a repository cannot set. Settings
 * that place files outside the repository live here (or in the environment), never in warren.yaml.
 */

/**
 * A machine tasks may run on (`warren new --runner ssh:NAME`): how to reach it over SSH and the
 * warren there. Only the user declares one: what a repository names would be where its code runs.
 */
const hostSchema = z.strictObject({
  /** `user@host` or `host`, as ssh takes it; never an option. */
  ssh: z
    .string()
    .regex(/^(?:[A-Za-z0-9._][A-Za-z0-9._-]*@)?[A-Za-z0-9.:_[\]][A-Za-z0-9.:_[\]-]*$/, 'user@host, as ssh takes it'),
  port: z.number().int().min(1).max(65535).optional(),
  /** The private key ssh is given (`-i`), an absolute path. */
  identity: z
    .string()
    .refine((p) => p.startsWith('/') && !p.includes('\0'), 'an absolute path')
    .optional(),
  /** The command that runs warren on the host, as argv (default `[warren]`). */
  warren: z.array(z.string().min(1)).min(1).optional(),
  /** WARREN_HOME on the host, an absolute path (default: the host's own). */
  home: z
    .string()
    .refine((p) => p.startsWith('/') && !p.includes('\0'), 'an absolute path')
    .optional(),
});
export type HostConfig = z.infer<typeof hostSchema>;

export const userConfigSchema = z.strictObject({
  /** Machines tasks may run on over SSH (docs/design/runners.md): `warren new --runner ssh:NAME`. */
  hosts: z.record(z.string().regex(HOST_NAME, 'a host name: letters, digits, _ and -'), hostSchema).optional(),
  /** An absolute folder; each repository's workspaces go in `<worktree_root>/<project>/`. */
  worktree_root: z.string().min(1).optional(),
  /**
   * What a sandboxed command may read of your home folder, relative to it (the rest of it is
   * hidden): replaces the default list, src/run/sandbox.ts's SANDBOX_HOME.
   */
  sandbox_home: z
    .array(
      z
        .string()
        .min(1)
        .refine(
          (p) => !p.startsWith('/') && !p.split('/').includes('..'),
          'a path inside your home folder, relative to it',
        ),
    )
    .optional(),
  /**
   * Variables of your environment a sandboxed command is also given, beyond warren's short list
   * (src/run/declared-env.ts): names, or a prefix ending in `*` (`[SSH_AUTH_SOCK, AWS_*]`).
   * Nothing else of warren's environment reaches the sandbox.
   */
  sandbox_env: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'a variable name, or a prefix ending in *'))
    .optional(),
  /**
   * Unix sockets a sandboxed command may connect to, by absolute path (your SSH agent's, a
   * docker socket): bound into the sandbox. None is by default: `/run` and your home are hidden.
   */
  sandbox_sockets: z
    .array(
      z
        .string()
        .refine((p) => p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\0'), 'an absolute path'),
    )
    .optional(),
  /**
   * Kubernetes clusters a repository's `runner: k8s:NAME` may name (src/run/k8s/): where the
   * kubeconfig is, the namespace, and warren's SandboxTemplate and SandboxWarmPool there (applied
   * when missing from k8s/warren-template.yaml and k8s/warren-warmpool.yaml, with this image and
   * RuntimeClass).
   */
  clusters: z
    .record(
      z.string().regex(CLUSTER_NAME, 'a cluster name: lowercase letters, digits and -'),
      z.strictObject({
        kubeconfig: z
          .string()
          .refine((p) => p.startsWith('/') && !p.includes('\0'), 'an absolute path')
          .optional(),
        context: z.string().min(1).optional(),
        namespace: z
          .string()
          .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a namespace name')
          .default('default'),
        template: z
          .string()
          .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'an object name')
          .default('warren'),
        image: z
          .string()
          .regex(/^[a-z0-9][a-z0-9._/:@-]*$/i, 'an image name')
          .optional(),
        runtimeClass: z
          .string()
          .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'a RuntimeClass name')
          .optional(),
        replicas: z.number().int().min(0).max(100).default(2),
      }),
    )
    .optional(),
  /**
   * The command the dashboard's "Open in editor" runs, the workspace's path added as its last
   * argument (`[code]`, `[zed]`, `[idea]`): argv, never a shell.
   */
  editor: z.array(z.string().min(1)).min(1).optional(),
  /**
   * `url`: a PostgreSQL server of the user's in place of warren's own cluster: a role that may
   * create databases and roles (`postgres://USER:PASSWORD@HOST:PORT/postgres`).
   * WARREN_POSTGRES_URL overrides it. `limits`: the most a repository's task role may take of
   * the server (whichever it is).
   */
  postgres: z
    .strictObject({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
        .optional(),
      limits: pgLimits.optional(),
    })
    .optional(),
});

export type UserConfig = z.infer<typeof userConfigSchema>;
