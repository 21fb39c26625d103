import { z } from 'zod';

/** `warren.yaml`. Unknown keys and wrong types are errors that name the key (strict objects). */

// Zero is refused here, not first at run time (where parseDuration refuses it too).
const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h)$/, 'a duration such as 500ms, 2s, 10m or 1h')
  .refine((text) => Number.parseFloat(text) > 0, 'a duration greater than zero, such as 500ms, 2s, 10m or 1h');
const command = z.union([z.string().min(1), z.array(z.string()).min(1)]);
const id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, . _ - (1-64 characters)');

export const PROVISION_MODES = ['copy', 'hardlink', 'share', 'cow'] as const;
export type ProvisionMode = (typeof PROVISION_MODES)[number];

export const configSchema = z.strictObject({
  /** Where workspaces go; default `$WARREN_HOME/worktrees/<project>`. Relative to the repository root. */
  worktree_root: z.string().min(1).optional(),
  provision: z
    .array(z.strictObject({ path: z.string().min(1), mode: z.enum(PROVISION_MODES) }))
    .default([]),
  provision_budget: z
    .strictObject({
      bytes: z.union([z.number().int().positive(), z.string().regex(/^\d+(\.\d+)?\s*(B|KiB|MiB|GiB|TiB)$/)]).optional(),
      entries: z.number().int().positive().optional(),
    })
    .optional(),
  setup: z.array(z.strictObject({ id, run: command, timeout: duration.optional() })).default([]),
  verify: z
    .array(z.strictObject({ id, run: command, required: z.boolean().default(true), timeout: duration.optional() }))
    .default([]),
  teardown: z.array(z.strictObject({ id, run: command, timeout: duration.optional() })).default([]),
  protected: z.array(z.string().min(1)).default([]),
  sandbox: z.enum(['none', 'bwrap']).default('none'),
  network: z.boolean().optional(),
  ports: z.strictObject({ count: z.number().int().min(1).max(100).default(10) }).optional(),
  kill_grace: duration.optional(),
  agents: z
    .record(
      z.string(),
      z.strictObject({ command: z.array(z.string()).min(1), prompt: z.enum(['argv', 'stdin', 'file']).default('argv') }),
    )
    .optional(),
});

export type WarrenConfig = z.infer<typeof configSchema>;
export type CommandSpec = z.infer<typeof command>;
