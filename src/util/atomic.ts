import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes to a temp file beside the target, then renames it into place: readers see old or new,
 * never half. `mode` (e.g. 0o600 for a file holding a password) is the file's from its first
 * byte, never widened by the umask for a moment.
 */
export function writeFileAtomic(file: string, content: string | Buffer, options: { mode?: number } = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  try {
    fs.writeFileSync(tmp, content, options.mode === undefined ? {} : { mode: options.mode, flag: 'wx' });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
