import os from 'node:os';
import path from 'node:path';

/** `WARREN_HOME`, default `~/.warren`: the state database and, by default, the workspaces. */
export function warrenHome(): string {
  const fromEnv = process.env.WARREN_HOME;
  return path.resolve(fromEnv && fromEnv !== '' ? fromEnv : path.join(os.homedir(), '.warren'));
}
