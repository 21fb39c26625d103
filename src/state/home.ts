import os from 'node:os';
import path from 'node:path';

// Its own module: the command line's entry chunk reads it before the rest of warren loads
// (src/cli/warm-client.ts), and nothing here may pull in the database.

/** `WARREN_HOME`, default `~/.warren`: the state database and, by default, the workspaces. */
export function warrenHome(): string {
  const fromEnv = process.env.WARREN_HOME;
  return path.resolve(fromEnv && fromEnv !== '' ? fromEnv : path.join(os.homedir(), '.warren'));
}

/**
 * Where `warren warm` listens (src/cli/warm-server.ts). Its folder is hidden from sandboxed runs
 * (src/run/sandbox.ts): a command there must not reach a warren that runs outside.
 */
export function warmDir(home: string): string {
  return path.join(home, 'warm');
}
