import { z } from 'zod';

/** `warren.yaml`. Unknown keys and wrong types are errors that name the key (strict objects). */

// Zero is refused here, not first at run time (where parseDuration refuses it too).
const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h)$/, 'a duration such as 500ms, 2s, 10m or 1h')
  .refine((text) => Number.parseFloat(text) > 0, 'a duration greater than zero, such as 500ms, 2s, 10m or 1h');
const command = z.union([z.string().min(1), z.array(z.string()).min(1)]);
const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, . _ - (1-64 characters)');
/** A task type is the first part of its branches' names (`TYPE/ID`): validate.ts also holds it to git's branch-name rules. */
const taskType = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._/-]{0,31}$/,
    'letters, digits, . _ - / (1-32 characters, starting with a letter or digit)',
  );
/** A duration of days or less, for how long things are kept: `14d`, `12h`. */
const keep = z.string().regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, 'a duration such as 12h or 14d');

/** An egress allowlist entry: `host`, `host:port`, `*.domain[:port]`, an IPv4 address or `[IPv6]`, with an optional port. */
export const ALLOW_ENTRY =
  /^(?:\*\.)?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;
const allowEntry = z
  .string()
  .regex(ALLOW_ENTRY, 'host, host:port, *.domain, an IPv4 address or [IPv6], with an optional :port')
  .refine((e) => {
    const port = /:(\d+)$/.exec(e)?.[1];
    return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
  }, 'a port from 1 to 65535')
  // Without its port a loopback entry would open every service on the host's loopback (the
  // dashboard among them): a local model server is `127.0.0.1:11434`, not `127.0.0.1`.
  .refine(
    (e) => !/^(?:127(?:\.\d{1,3}){3}|localhost|\[::1\]|::1)$/i.test(e),
    'a loopback entry needs its port (127.0.0.1:PORT, localhost:PORT, [::1]:PORT)',
  );

export const PROVISION_MODES = ['copy', 'hardlink', 'share', 'cow'] as const;
export type ProvisionMode = (typeof PROVISION_MODES)[number];

export const configSchema = z
  .strictObject({
    /**
     * Where workspaces go; default `$WARREN_HOME/worktrees/<project>`. Relative to the repository
     * root. A repository may only choose a folder inside itself (not `.git`) or under WARREN_HOME;
     * a root elsewhere is the user's choice (`userConfigSchema`, WARREN_WORKTREE_ROOT).
     */
    worktree_root: z.string().min(1).optional(),
    provision: z.array(z.strictObject({ path: z.string().min(1), mode: z.enum(PROVISION_MODES) })).default([]),
    provision_budget: z
      .strictObject({
        bytes: z
          .union([z.number().int().positive(), z.string().regex(/^\d+(\.\d+)?\s*(B|KiB|MiB|GiB|TiB)$/)])
          .optional(),
        entries: z.number().int().positive().optional(),
      })
      .optional(),
    /**
     * `gate`: whether the step runs in the merge queue's integration workspace too — `true` on
     * every gate run, `install` only when no dependency snapshot matches the integrated tree's
     * lockfiles (default: `install` for a step that runs a package manager's install, else false).
     */
    setup: z
      .array(
        z.strictObject({
          id,
          run: command,
          timeout: duration.optional(),
          gate: z.union([z.boolean(), z.literal('install')]).optional(),
        }),
      )
      .default([]),
    verify: z
      .array(z.strictObject({ id, run: command, required: z.boolean().default(true), timeout: duration.optional() }))
      .default([]),
    teardown: z.array(z.strictObject({ id, run: command, timeout: duration.optional() })).default([]),
    protected: z.array(z.string().min(1)).default([]),
    /** `none`, `bwrap`, or bwrap with egress through warren's proxy to the listed hosts only. */
    sandbox: z
      .union(
        [
          z.enum(['none', 'bwrap']),
          z.strictObject({ kind: z.literal('bwrap'), allow: z.array(allowEntry).default([]) }),
        ],
        {
          error: 'expected none, bwrap, or { kind: bwrap, allow: [host[:port], …] }',
        },
      )
      .default('none'),
    /** How a workspace's tracked files are made: `git worktree add` (git), a copy-on-write overlay of a shared snapshot (cow), or cow above a measured size (auto). */
    checkout: z.enum(['git', 'cow', 'auto']).default('git'),
    network: z.boolean().optional(),
    ports: z.strictObject({ count: z.number().int().min(1).max(100).default(10) }).optional(),
    kill_grace: duration.optional(),
    /** The merge queue: which verify commands gate a land (default: the required ones), and how many tasks are tested together. */
    land: z
      .strictObject({
        gate: z.array(id).optional(),
        batch: z.number().int().min(1).max(64).optional(),
      })
      .optional(),
    /** The task types `warren new` takes (replacing the five built-in ones), each the prefix of its tasks' branches. */
    types: z.array(taskType).min(1).optional(),
    /** What `rm --discard` saves: how long `gc` keeps it. */
    archive: z.strictObject({ keep: keep.optional() }).optional(),
    agents: z
      .record(
        z.string(),
        z.strictObject({
          /** Without one, the entry only tunes the built-in agent of that name (its leftover_grace). */
          command: z.array(z.string()).min(1).optional(),
          prompt: z.enum(['argv', 'stdin', 'file']).default('argv'),
          /** How long an agent that gave its final result may be kept running by processes it left, before warren ends them. */
          leftover_grace: duration.optional(),
        }),
      )
      .optional(),
  })
  .superRefine((config, ctx) => {
    if (typeof config.sandbox === 'object' && config.network === true) {
      ctx.addIssue({
        code: 'custom',
        path: ['network'],
        message:
          'network: true lets every connection out, which the sandbox allow list exists to prevent; keep one of the two',
      });
    }
  });

export type WarrenConfig = z.infer<typeof configSchema>;
export type CommandSpec = z.infer<typeof command>;

/**
 * `$WARREN_HOME/config.yaml`: the user's own settings, which a repository cannot set. Settings
 * that place files outside the repository live here (or in the environment), never in warren.yaml.
 */
export const userConfigSchema = z.strictObject({
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
   * The command the dashboard's "Open in editor" runs, the workspace's path added as its last
   * argument (`[code]`, `[zed]`, `[idea]`): argv, never a shell.
   */
  editor: z.array(z.string().min(1)).min(1).optional(),
});

export type UserConfig = z.infer<typeof userConfigSchema>;
