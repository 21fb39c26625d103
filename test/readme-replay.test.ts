import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_CLI_BIN, unavailable } from './helpers/capabilities.js';
import { NOTE, startModelServer } from './helpers/model-server.js';
import { NOBODY } from './helpers/nobody.js';
import { block, commandsOf, replayInstall, type Shell } from './helpers/readme.js';
import { fullTierOnly } from './helpers/tier.js';
import { unmountUnder } from './helpers/tree.js';

/**
 * Issue 31: a user who is not root, on a machine with nothing of warren's, follows only the
 * README. Its code blocks are run as they are written, as uid 65534: the install (a clone built
 * by `npm ci`, the registry an offline mirror of the versions package-lock.json pins, with
 * better-sqlite3's prebuilt binary: nothing compiles, helpers/readme.ts), a first task with the
 * README's warren.yaml that skips the install, whose `status` lists only the real edit, a real
 * agent (the real claude CLI against the scripted model server), and the resume, with the
 * commands the README shows. Without the prebuilt binary: test/readme-install.test.ts.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

const noNobody = unavailable(import.meta.filename, 'nobody');
const noClaude = unavailable(import.meta.filename, 'claude-cli');

describe.skipIf(
  noNobody !== null || noClaude !== null || fullTierOnly(import.meta.filename, "the README's steps, replayed"),
)('the README, followed by a user who is not root, verbatim', () => {
  it(
    'installs warren, makes a first task without reinstalling its dependencies, runs a real agent and resumes it',
    { timeout: 1_200_000 },
    async () => {
      // ── Install: the README's block, as written, from a clone of this checkout.
      const {
        home,
        installed,
        builds,
        mirror,
        sh,
        user: installedUser,
      } = await replayInstall(README, {
        prebuilt: true,
      });
      const server = await startModelServer();
      const app = path.join(home, 'my-app');
      fs.mkdirSync(app, { recursive: true });
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, app]);
      try {
        expect(installed.code, `${installed.stdout}\n${installed.stderr}\nmisses: ${mirror.misses.join(', ')}`).toBe(0);
        expect(installed.stdout.trim().split('\n').at(-1)).toBe(
          (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
        );
        // On the user's own PATH; nothing compiled (the prebuilt binary came from the mirror).
        expect(fs.lstatSync(path.join(home, '.local/bin/warren')).uid).toBe(NOBODY);
        expect(builds).toEqual([]);
        expect(installed.stderr).not.toMatch(/gyp|not yet covered by allowScripts/);

        // As the profile line leaves it: the installed warren first; the agent CLI on PATH too.
        const onPath = `${home}/.local/bin:`;
        const user = { PATH: (installedUser.PATH ?? '').replace(onPath, `${onPath}${AGENT_CLI_BIN}:`) };
        // The pages the hints name are in the package: `warren help configuration` prints one, for a terminal.
        const help = await sh(home, 'warren help configuration', user);
        expect(help.code, help.stderr).toBe(0);
        expect(help.stdout).toMatch(/^Configuration: `warren.yaml`\n=+\n/);

        // ── A repository whose node_modules npm installed from its lockfile, with the README's warren.yaml.
        const yaml = block(
          README,
          (b) => b.lang === 'yaml' && b.lines.some((l) => l.includes('mode: cow')),
          'warren.yaml',
        );
        const vendor = path.join(app, 'vendor', 'package');
        fs.mkdirSync(vendor, { recursive: true });
        fs.writeFileSync(path.join(vendor, 'package.json'), '{"name":"left-pad","version":"1.3.0"}\n');
        fs.writeFileSync(path.join(vendor, 'index.js'), 'module.exports = (s) => s;\n');
        execFileSync('tar', [
          '-czf',
          path.join(app, 'vendor/left-pad-1.3.0.tgz'),
          '-C',
          path.join(app, 'vendor'),
          'package',
        ]);
        fs.rmSync(vendor, { recursive: true });
        fs.writeFileSync(
          path.join(app, 'package.json'),
          `${JSON.stringify({ name: 'my-app', version: '1.0.0', scripts: { test: 'node app.js' }, dependencies: { 'left-pad': 'file:vendor/left-pad-1.3.0.tgz' } }, null, 2)}\n`,
        );
        fs.writeFileSync(path.join(app, 'app.js'), 'export const a = 1;\n');
        fs.writeFileSync(path.join(app, '.gitignore'), 'node_modules/\n.env\n');
        fs.writeFileSync(path.join(app, '.env'), 'SECRET=dev\n');
        fs.writeFileSync(path.join(app, 'warren.yaml'), `${yaml.lines.join('\n')}\n`);
        execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, app]);
        const prepared = await sh(
          app,
          'git init -q -b main && git config user.name Dev && git config user.email dev@example.invalid && npm install --offline --loglevel=error && git add -A && git commit -qm init',
        );
        expect(prepared.code, prepared.stderr).toBe(0);

        // ── The first task: each `$` line of the README's block, as written.
        const first = commandsOf(
          block(README, (b) => b.lines[0]?.startsWith('$ warren trust --yes') === true, 'first task'),
        );
        expect(first.map((c) => c.command.replace(/\s+#.*$/, ''))).toEqual([
          'warren trust --yes',
          'warren new feat cart',
          'warren exec cart -- sed -i s/1/2/ app.js',
          'warren status cart',
        ]);
        const ran: Shell[] = [];
        for (const { command } of first) {
          const r = await sh(app, command, user);
          expect(r.code, `${command}\n${r.stdout}\n${r.stderr}`).toBe(0);
          ran.push(r);
        }
        const [, made, , status] = ran as [Shell, Shell, Shell, Shell];
        // Fast because the install is skipped, which the line below proves (no timed assertion: CI may be loaded).
        const skipped = first[1]?.shown.find((l) => l.startsWith('setup deps skipped:')) ?? 'missing in the README';
        expect(made.stdout.split('\n')).toContain(skipped);
        // status lists only the real edit, as the README shows it.
        expect(status.stdout.trimEnd()).toBe(first[3]?.shown.join('\n'));

        // ── A real agent, and the resume, with the README's commands.
        const agent = commandsOf(
          block(README, (b) => b.lines.some((l) => l.includes('--agent claude')), 'agent block'),
        );
        expect(agent.map((c) => c.command.replace(/\s+#.*$/, ''))).toEqual([
          "warren run cart --agent claude --prompt 'Add a cart.'",
          'warren run cart --resume',
        ]);
        const model = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'scripted' };
        const run = await sh(app, agent[0]?.command ?? '', { ...user, ...model });
        expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
        const ws = (await sh(app, 'warren path cart', user)).stdout.trim();
        expect(fs.readFileSync(path.join(ws, 'agent-note.txt'), 'utf8')).toBe(NOTE);
        const seen = server.received.length;
        const resumed = await sh(app, agent[1]?.command ?? '', { ...user, ...model });
        expect(resumed.code, `${resumed.stdout}\n${resumed.stderr}`).toBe(0);
        const later = server.received.slice(seen).filter((r) => r.body.includes('Add a cart.'));
        expect(later.length).toBeGreaterThan(0);
        // npm asked the registry for nothing the install needed that the mirror lacks.
        expect(mirror.misses.filter((m) => !mirror.optionalPeers.has(m.replace(/^GET \//, '')))).toEqual([]);
      } finally {
        unmountUnder(path.dirname(home));
      }
    },
  );
});
