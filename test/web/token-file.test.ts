import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWarrenError } from '../../src/errors.js';
import { loadOrCreateToken, tokenFilePath } from '../../src/web/token-file.js';
import { tmpDir } from '../helpers/repo.js';

/** `$WARREN_HOME/dashboard/token`: made private, reused, and replaced when it may be known. */

const mode = (p: string) => fs.lstatSync(p).mode & 0o777;

function refusalOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
}

describe('the dashboard token file', () => {
  it('is made 0600 in a 0700 folder, and the next server reuses it', () => {
    const home = tmpDir();
    const first = loadOrCreateToken(home);
    expect(first.file).toBe(tokenFilePath(home));
    expect(first.replaced).toBeUndefined();
    expect(first.token).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.readFileSync(first.file, 'utf8')).toBe(`${first.token}\n`);
    expect(mode(first.file)).toBe(0o600);
    expect(mode(path.dirname(first.file))).toBe(0o700);
    expect(loadOrCreateToken(home)).toEqual({ token: first.token, file: first.file });
    // Nothing else is left in the folder (the temporary file it was written as is gone).
    expect(fs.readdirSync(path.dirname(first.file))).toEqual(['token']);
  });

  it('closes a folder others could enter, and replaces a token others could read, a link, or a file that holds none', () => {
    const home = tmpDir();
    const { token, file } = loadOrCreateToken(home);
    fs.chmodSync(path.dirname(file), 0o755);
    expect(loadOrCreateToken(home).token).toBe(token);
    expect(mode(path.dirname(file))).toBe(0o700);

    fs.chmodSync(file, 0o644);
    const readable = loadOrCreateToken(home);
    expect(readable.token).not.toBe(token);
    expect(readable.replaced).toBe(`${file} was readable by others (mode 0644), so its token may be known`);
    expect(mode(file)).toBe(0o600);

    const elsewhere = path.join(home, 'chosen-token');
    fs.writeFileSync(elsewhere, `${'a'.repeat(64)}\n`, { mode: 0o600 });
    fs.rmSync(file);
    fs.symlinkSync(elsewhere, file);
    const linked = loadOrCreateToken(home);
    expect(linked.replaced).toBe(`${file} was a symbolic link`);
    expect(linked.token).not.toBe('a'.repeat(64));
    expect(fs.lstatSync(file).isFile()).toBe(true);
    expect(fs.readFileSync(elsewhere, 'utf8')).toBe(`${'a'.repeat(64)}\n`);

    fs.writeFileSync(file, 'not a token\n', { mode: 0o600 });
    expect(loadOrCreateToken(home).replaced).toBe(`${file} did not hold a token (64 hexadecimal digits)`);
  });

  it('refuses a folder that is a link, and a token that is not a file, with TOKEN_FILE_UNSAFE, changing nothing', () => {
    const home = tmpDir();
    const target = tmpDir();
    fs.symlinkSync(target, path.join(home, 'dashboard'));
    expect(
      isWarrenError(
        refusalOf(() => loadOrCreateToken(home)),
        'TOKEN_FILE_UNSAFE',
      ),
    ).toBe(true);
    expect(fs.readdirSync(target)).toEqual([]);

    const other = tmpDir();
    fs.mkdirSync(path.join(other, 'dashboard', 'token'), { recursive: true });
    expect(
      isWarrenError(
        refusalOf(() => loadOrCreateToken(other)),
        'TOKEN_FILE_UNSAFE',
      ),
    ).toBe(true);
    expect(fs.readdirSync(path.join(other, 'dashboard')).sort()).toEqual(['token']);
  });
});
