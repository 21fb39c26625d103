import { spawn } from 'node:child_process';

/**
 * Runs a system tool (cp, mount, umount) by argv, never through a shell, in its own process
 * group so a timeout kills it and anything it started. git has its own seam (src/git/exec.ts);
 * agents and user commands go through the supervisor. This is for warren's own file-system work.
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
  /** Called once the tool has started (e.g. to watch its progress through /proc/PID). */
  onSpawn?: (pid: number) => void;
}

export function runTool(argv: readonly string[], options: ToolOptions = {}): Promise<ToolResult> {
  const [cmd, ...args] = argv;
  if (cmd === undefined) throw new Error('runTool: empty argv');
  const timeoutMs = options.timeoutMs ?? 30 * 60_000;
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: { ...process.env, LC_ALL: 'C' },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    if (options.input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // the tool may exit without reading it all
      child.stdin.end(options.input);
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(kill, timeoutMs);
    options.signal?.addEventListener('abort', kill, { once: true });
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    child.on('error', (cause) => {
      clearTimeout(timer);
      resolve({ argv: [...argv], exitCode: 127, stdout: '', stderr: cause.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        argv: [...argv],
        exitCode: code ?? 128,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
  });
}
