import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { setCodeCacheUse } from '../system/code-cache-state.js';

/**
 * Runs `warren new`'s build (dist/bundle-new/new.cjs, one CommonJS file) from a V8 code cache the
 * build made beside it (scripts/code-cache.js), so that its 408 KB are not parsed and compiled
 * again by every command: a cold `warren new` took 232 instead of 262 ms (medians of 25,
 * interleaved; docs/benchmarks.md). Node 20 has no compile cache of its own (Node 22.1 does).
 *
 * A code cache is code that V8 runs, so this takes one only from the build, beside the bundle
 * (as trusted as the bundle itself), never writes one while a command runs (only for the build,
 * WARREN_CODE_CACHE_WRITE), and uses it only when its first 32 bytes are the SHA-256 of the
 * bundle it is loading (V8's own check is the source's length) and V8 accepts it (its version,
 * its flags). Otherwise the bundle compiles as it would without one, and `warren new` says so
 * (`startup.uncached`, a warning): it is ~30 ms slower, nothing else differs.
 */

export function runFromCodeCache(file: string): void {
  const cacheFile = `${file}.cache`;
  const source = fs.readFileSync(file, 'utf8');
  const digest = createHash('sha256').update(source).digest();
  let cachedData: Buffer | undefined;
  let why: string | undefined;
  try {
    const cache = fs.readFileSync(cacheFile);
    if (cache.subarray(0, 32).equals(digest)) cachedData = cache.subarray(32);
    else why = `${cacheFile} was made for another build of ${path.basename(file)}`;
  } catch {
    why = `${cacheFile} is missing (the build did not make it)`;
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (cachedData && script.cachedDataRejected) {
    const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ').trim();
    why = `V8 rejected ${cacheFile}: it was made by another Node than ${process.version} or with other V8 flags${flags === '' ? '' : ` (this one runs with ${flags})`}`;
  }
  const writeTo = process.env.WARREN_CODE_CACHE_WRITE;
  if (writeTo !== undefined && path.resolve(writeTo) === cacheFile) {
    // For the build: after the command, so that what it compiled while running is in it too.
    process.once('exit', () => fs.writeFileSync(cacheFile, Buffer.concat([digest, script.createCachedData()])));
  } else {
    setCodeCacheUse(why === undefined ? { cached: true } : { cached: false, why });
  }
  const mod = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void).call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
}
