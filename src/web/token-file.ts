import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { newToken } from './security.js';

/**
 * The dashboard's token, kept in `$WARREN_HOME/dashboard/token`: the folder 0700, the file 0600,
 * both this user's. One token per WARREN_HOME, made by the first `warren serve` and reused by the
 * next, so a printed URL (and an open tab) still works after a restart; deleting the file makes
 * the next `warren serve` choose a new one.
 */

export interface TokenFile {
  token: string;
  file: string;
  /** Why an existing file was not used and a new token was written in its place. */
  replaced?: string;
}

const TOKEN = /^[0-9a-f]{64}\n?$/;

export function tokenFilePath(home: string): string {
  return path.join(home, 'dashboard', 'token');
}

export function loadOrCreateToken(home: string): TokenFile {
  const file = tokenFilePath(home);
  privateFolder(path.dirname(file));
  const existing = readToken(file);
  if ('token' in existing) return { token: existing.token, file };
  const token = newToken();
  // Written aside, then put in place in one step: a reader never sees half a token. A new file is
  // linked (so two servers starting at once agree on the first one's); one found unfit is replaced.
  const tmp = path.join(path.dirname(file), `.token-${process.pid}-${newToken().slice(0, 8)}`);
  fs.writeFileSync(tmp, `${token}\n`, { mode: 0o600, flag: 'wx' });
  try {
    if (existing.unfit === null) {
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const theirs = readToken(file);
        if ('token' in theirs) return { token: theirs.token, file };
        fs.renameSync(tmp, file);
      }
    } else {
      fs.renameSync(tmp, file);
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return { token, file, ...(existing.unfit === null ? {} : { replaced: existing.unfit }) };
}

/** The folder: made 0700, or, when it exists, a real folder of this user's, made 0700 if it was not. */
function privateFolder(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = fs.lstatSync(dir);
  const uid = process.geteuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) {
    const what = stat.isDirectory() ? `a folder of uid ${stat.uid}` : 'not a folder (a link, or a file)';
    throw new WarrenError(
      'TOKEN_FILE_UNSAFE',
      `${dir} is ${what}, so the dashboard's token cannot be kept there for you alone; nothing was started and nothing was changed.`,
      { hint: `Remove ${dir} (warren makes it again, 0700), then run \`warren serve\` again.`, details: { dir } },
    );
  }
  if ((stat.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

/** The token in `file`; or, when it cannot be used, why (null: there is no file). */
function readToken(file: string): { token: string } | { unfit: string | null } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { unfit: null };
    if (code === 'ELOOP') return { unfit: `${file} was a symbolic link` };
    throw err;
  }
  try {
    const stat = fs.fstatSync(fd);
    const uid = process.geteuid?.();
    if (!stat.isFile()) {
      throw new WarrenError(
        'TOKEN_FILE_UNSAFE',
        `${file} is not a regular file, so the dashboard's token cannot be kept there; nothing was started and nothing was changed.`,
        { hint: `Remove ${file} (warren writes it again, 0600), then run \`warren serve\` again.`, details: { file } },
      );
    }
    if (uid !== undefined && stat.uid !== uid) return { unfit: `${file} belonged to uid ${stat.uid}` };
    if ((stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
      return { unfit: `${file} was readable by others (mode ${mode}), so its token may be known` };
    }
    const text = fs.readFileSync(fd, 'utf8');
    if (!TOKEN.test(text)) return { unfit: `${file} did not hold a token (64 hexadecimal digits)` };
    return { token: text.trim() };
  } finally {
    fs.closeSync(fd);
  }
}
