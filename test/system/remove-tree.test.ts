import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWarrenError } from '../../src/errors.js';
import { removalRefusal, type RemovalFacts } from '../../src/system/remove-guard.js';
import { removeTree } from '../../src/system/remove-tree.js';
import { tmpDir } from '../helpers/repo.js';

/** removeTree's own guards: the decision on plain strings, then against the real disk. */

const facts = (given: string, more: Partial<RemovalFacts> = {}): RemovalFacts => ({
  given,
  real: given,
  ownHomes: ['/home/me'],
  homes: ['/root', '/home/me', '/var/lib/postgresql'],
  inside: null,
  ...more,
});

describe('removalRefusal', () => {
  it.each([
    ['/', 'it is the root of the file system'],
    ['relative/dir', 'it is not an absolute path'],
    ['', 'it is not an absolute path'],
    ['/tmp/a\0b', 'it holds a NUL byte'],
    ['/home/me', 'it is a home directory'],
    ['/home/me/', 'it is a home directory'],
    ['/home/me/work/..', 'it is a home directory'],
    ['/root', 'it is a home directory'],
    ['/var/lib/postgresql', 'it is a home directory'],
    ['/home', 'it holds your home directory'],
    ['/tmp/../..', 'it is the root of the file system'],
  ])('refuses %j: %s', (given, why) => {
    expect(removalRefusal(facts(given))).toBe(why);
  });

  it('refuses a path whose parent is a link to a home, and one that leaves the root it must stay inside', () => {
    expect(removalRefusal(facts('/tmp/link/me', { real: '/home/me' }))).toBe('it is a home directory');
    expect(removalRefusal(facts('/srv/w/a/../../x', { inside: '/srv/w' }))).toBe('it is not inside /srv/w');
    expect(removalRefusal(facts('/srv/w', { inside: '/srv/w' }))).toBe('it is not inside /srv/w');
    expect(removalRefusal(facts('/srv/w/x', { real: '/etc/x', inside: '/srv/w' }))).toBe('it is not inside /srv/w');
  });

  it('allows what is inside a home, and inside its root', () => {
    expect(removalRefusal(facts('/home/me/.warren/worktrees/p/t'))).toBeNull();
    expect(removalRefusal(facts('/srv/w/t/node_modules', { inside: '/srv/w' }))).toBeNull();
    expect(removalRefusal(facts('/nonexistent-parent/x'))).toBeNull();
  });
});

describe('removeTree', () => {
  it('refuses before deleting anything: /, $HOME, a relative path, a NUL, outside its root, through a link', () => {
    const base = tmpDir('warren-remove-');
    const keep = path.join(base, 'keep');
    fs.mkdirSync(keep);
    fs.writeFileSync(path.join(keep, 'f'), 'x');
    // A link to the folder that holds this user's home: through it, a name that is the home.
    const link = path.join(base, 'homes-link');
    fs.symlinkSync(path.dirname(os.homedir()), link);
    const refused = (target: string, inside?: string): string => {
      try {
        removeTree(target, inside === undefined ? {} : { inside });
      } catch (err) {
        if (isWarrenError(err)) return err.code;
        throw err;
      }
      return 'deleted';
    };
    expect(refused('/')).toBe('PATH_UNSAFE');
    expect(refused(os.homedir())).toBe('PATH_UNSAFE');
    expect(refused(path.join(link, path.basename(os.homedir())))).toBe('PATH_UNSAFE');
    expect(refused('keep')).toBe('PATH_UNSAFE');
    expect(refused(`${keep}\0`)).toBe('PATH_UNSAFE');
    expect(refused(keep, path.join(base, 'other'))).toBe('PATH_ESCAPE');
    expect(refused(path.join(base, 'other', '..', 'keep'), path.join(base, 'other'))).toBe('PATH_ESCAPE');
    expect(fs.readFileSync(path.join(keep, 'f'), 'utf8')).toBe('x');
    expect(fs.existsSync(os.homedir())).toBe(true);

    // Inside its root: deleted; a link in it is unlinked, never followed.
    fs.symlinkSync(keep, path.join(base, 'to-keep'));
    expect(removeTree(path.join(base, 'to-keep'), { inside: base })).toEqual([]);
    expect(fs.existsSync(path.join(keep, 'f'))).toBe(true);
    expect(removeTree(keep, { inside: base })).toEqual([]);
    expect(fs.existsSync(keep)).toBe(false);
    expect(removeTree(base)).toEqual([]);
    expect(fs.existsSync(base)).toBe(false);
  });
});
