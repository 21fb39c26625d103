import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable } from './helpers/capabilities.js';
import { NOBODY } from './helpers/nobody.js';
import { replayInstall } from './helpers/readme.js';
import { fullTierOnly } from './helpers/tier.js';

/**
 * Issue 39: the README's install compiles the native module once. A user who is not root, on a
 * machine that cannot download better-sqlite3's prebuilt binary (as this one cannot), runs the
 * README's install block as written: `npm ci` compiles it, and nothing after compiles it again
 * (the packed tarball's `npm install -g` did, 6 minutes more here), says nothing about
 * allowScripts, or moves npm's configuration. With the prebuilt binary, nothing compiles at all:
 * test/readme-replay.test.ts. Full tier only: the compile alone takes minutes on two cores.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const noNobody = unavailable(import.meta.filename, 'nobody');

describe.skipIf(noNobody !== null || fullTierOnly(import.meta.filename, 'a real compile of better-sqlite3 (minutes)'))(
  "the README's install, by a user who is not root, with no prebuilt binary to download",
  () => {
    it(
      'compiles better-sqlite3 once, and leaves npm and its configuration as they were',
      { timeout: 45 * 60_000 },
      async () => {
        const { home, user, installed, builds, mirror, sh } = await replayInstall(README, { prebuilt: false });
        const said = `${installed.stdout}\n${installed.stderr}`;
        expect(installed.code, said).toBe(0);
        expect(installed.stdout.trim().split('\n').at(-1)).toBe(VERSION);
        // One native build, better-sqlite3's, by the clone's `npm ci`.
        expect(builds, said).toHaveLength(1);
        expect(builds[0]).toMatch(/\/warren\/node_modules\/better-sqlite3$/);
        expect(said).not.toMatch(/not yet covered by allowScripts/);
        // On PATH as the user's own; npm's configuration untouched: no user config written.
        expect(fs.lstatSync(path.join(home, '.local/bin/warren')).uid).toBe(NOBODY);
        expect(fs.existsSync(path.join(home, '.npmrc'))).toBe(false);
        const npmPrefix = await sh(home, 'npm config get prefix');
        expect(npmPrefix.stdout.trim()).toBe(path.resolve(process.execPath, '../..'));
        // The installed warren opens its state (the compiled module loads) and makes a task.
        const app = path.join(home, 'app');
        const made = await sh(
          home,
          `mkdir app && cd app && git init -q -b main && git -c user.name=u -c user.email=u@example.invalid commit -q --allow-empty -m init && warren --json list && warren new feat first`,
          user,
        );
        expect(made.code, `${made.stdout}\n${made.stderr}`).toBe(0);
        expect(made.stdout).toContain('ready: feat/first');
        expect(fs.existsSync(app)).toBe(true);
        // Nothing fetched from elsewhere but the prebuilt binary this machine cannot have.
        const asked = mirror.misses.filter((m) => !m.includes('/prebuilds/'));
        expect(asked.filter((m) => !mirror.optionalPeers.has(m.replace(/^GET \//, '')))).toEqual([]);
      },
    );
  },
);
