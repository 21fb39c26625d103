import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, loadConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { isWarrenError } from '../../src/errors.js';
import { tmpDir } from '../helpers/repo.js';

describe('loading warren.yaml', () => {
  it('an absent file is the schema defaults', async () => {
    expect(DEFAULT_CONFIG).toEqual(configSchema.parse({}));
    expect(await loadConfig(tmpDir())).toEqual(DEFAULT_CONFIG);
  });

  it('caches a validated file by its exact text, and never caches an invalid one', async () => {
    const repo = tmpDir();
    const cache = path.join(tmpDir(), 'cache');
    fs.writeFileSync(path.join(repo, 'warren.yaml'), 'sandbox: bwrap\nprotected: ["*.local"]\n');
    const first = await loadConfig(repo, cache);
    expect(first).toMatchObject({ sandbox: 'bwrap', protected: ['*.local'], setup: [] });
    expect(fs.readdirSync(cache)).toHaveLength(1);
    expect(await loadConfig(repo, cache)).toEqual(first);

    // Another text is validated again: an edit can never be served from the cache.
    fs.writeFileSync(path.join(repo, 'warren.yaml'), 'sandbox: docker\n');
    const err = await loadConfig(repo, cache).catch((e: unknown) => e);
    expect(isWarrenError(err, 'CONFIG_INVALID')).toBe(true);
    expect(fs.readdirSync(cache)).toHaveLength(1);
  });

  it('names a duplicate key and broken YAML', async () => {
    const repo = tmpDir();
    fs.writeFileSync(path.join(repo, 'warren.yaml'), 'sandbox: none\nsandbox: bwrap\n');
    const err = await loadConfig(repo).catch((e: unknown) => e);
    expect(isWarrenError(err, 'CONFIG_INVALID')).toBe(true);
    fs.writeFileSync(path.join(repo, 'warren.yaml'), 'provision: [\n');
    const broken = await loadConfig(repo).catch((e: unknown) => e);
    expect(isWarrenError(broken, 'CONFIG_INVALID') && broken.message).toMatch(/not valid YAML/);
  });
});
