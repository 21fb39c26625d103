import { runBounded } from './spawn.js';

/**
 * Runs a system tool (cp, mount, umount, unshare) for warren's own file-system work: argv,
 * never a shell, bounded by the spawn primitive (its own process group, killed on timeout or
 * abort). git has typed operations of its own (src/git); a task's commands go through the
 * supervisor.
 */

export interface ToolResult {
  argv: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface ToolOptions {
  cwd?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  input?: string;
  /** Added to the environment (a client tool's connection: PGHOST, PGPASSWORD…). */
  env?: NodeJS.ProcessEnv;
  /** Called once the tool has started (e.g. to watch its progress through /proc/PID). */
  onSpawn?: (pid: number) => void;
}

export async function runTool(argv: readonly string[], options: ToolOptions = {}): Promise<ToolResult> {
  const result = await runBounded({
    argv,
    env: { ...process.env, ...options.env, LC_ALL: 'C' },
    stdin: options.input ?? 'ignore',
    stdout: 'collect',
    stderr: 'collect',
    timeoutMs: options.timeoutMs ?? 30 * 60_000,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
  });
  if (result.spawnError) return { argv: [...argv], exitCode: 127, stdout: '', stderr: result.spawnError.message };
  return {
    argv: [...argv],
    exitCode: result.exitCode ?? 128,
    stdout: result.stdout.toString('utf8'),
    stderr: result.stderr.toString('utf8'),
  };
}
