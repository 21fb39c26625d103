import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/composition.js';
import { tmpDir } from '../helpers/repo.js';

/**
 * warren loads better-sqlite3's addon itself (process.dlopen, src/state/db.ts). A program that
 * embeds warren may use better-sqlite3 on its own too: both must work in one process, in
 * either order.
 */
describe('the SQLite driver beside an embedding program', () => {
  it('a Store and a plain better-sqlite3 database work in one process, in either order', () => {
    const plainFirst = new Database(':memory:');
    expect(plainFirst.prepare('SELECT 1 AS x').get()).toEqual({ x: 1 });
    const store = openStore(path.join(tmpDir(), 'home'));
    try {
      expect(store.listProjects()).toEqual([]);
      const plainAfter = new Database(':memory:');
      expect(plainAfter.prepare('SELECT 2 AS y').get()).toEqual({ y: 2 });
      plainAfter.close();
    } finally {
      store.close();
      plainFirst.close();
    }
  });
});
