/**
 * Commands warren had and no longer has: each keeps a page saying so (docs/commands/NAME.md)
 * and a line on the index, and running it refuses with the same words (src/cli/commands/removed.ts).
 */
export interface RemovedCommand {
  /** When it went, and after which release. */
  removed: string;
  /** Why, in a sentence. */
  why: string;
  /** What to do instead. */
  instead: string;
}

export const REMOVED_COMMANDS: Readonly<Record<string, RemovedCommand>> = {
  warm: {
    removed: '2026-12 (after 0.1.0)',
    why: "it kept warren loaded in waiting processes so that commands started ~30 ms sooner, which mattered to no one (an agent works for minutes per task), and it was a resident process that ran whatever argv reached its socket, with its client's environment but not its rlimits, cgroup or groups",
    instead:
      'Nothing replaces it: commands start on their own, and the long-running paths (the library, `warren serve`, `warren mcp`) never paid the start-up. Stop any `warren warm` you still run and drop it from scripts.',
  },
};
