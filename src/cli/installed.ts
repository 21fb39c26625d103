import fs from 'node:fs';
import path from 'node:path';

/**
 * The command line a hook or an agent's MCP configuration names to start this warren later. The
 * `warren` found on PATH when it is this very warren (an npm install's `bin` link: it survives an
 * upgrade, where the package's own files move), else the running node and script by absolute
 * path (a clone run as `node bin/warren.js`). Absolute either way: Claude Code runs hooks with
 * its own PATH.
 */
export function installedCommand(self: readonly string[], pathValue: string | undefined): string[] {
  const script = self[1];
  const running = script === undefined ? null : realOrNull(script);
  if (running !== null) {
    for (const dir of (pathValue ?? '').split(path.delimiter)) {
      if (!path.isAbsolute(dir)) continue;
      const candidate = path.join(dir, 'warren');
      if (realOrNull(candidate) === running && isExecutable(candidate)) return [candidate];
    }
  }
  return [...self];
}

function realOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
