import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_CLI_BIN, unavailable } from './helpers/capabilities.js';
import { NOTE, startModelServer } from './helpers/model-server.js';
import { NOBODY } from './helpers/nobody.js';
import { startNpmMirror } from './helpers/npm-mirror.js';
import { tmpDir } from './helpers/repo.js';
import { fullTierOnly } from './helpers/tier.js';
import { unmountUnder } from './helpers/tree.js';

/**
 * Issue 31: a user who is not root, on a machine with nothing of warren's, follows only the
 * README. Its code blocks are run as they are written, as uid 65534: install from the packed
 * tarball (the registry is an offline mirror of the versions package-lock.json pins:
 * helpers/npm-mirror.ts), a first task with the README's warren.yaml that skips the install, whose
 * `status` lists only the real edit, a real agent (the real claude CLI against the scripted
 * model server), and the resume, with the commands the README shows.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

interface Block {
  lang: string;
  /** The heading the block is under. */
  section: string;
  lines: string[];
}

/** The README's fenced code blocks, with their language and section; an indented fence (in a list) too. */
export function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let section = '';
  let open: Block | null = null;
  let indent = '';
  for (const line of markdown.split('\n')) {
    if (open) {
      if (line.trim() === '```') {
        blocks.push(open);
        open = null;
      } else open.lines.push(line.startsWith(indent) ? line.slice(indent.length) : line);
      continue;
    }
    const fence = /^(\s*)```(\w+)\s*$/.exec(line);
    if (fence) {
      indent = fence[1] ?? '';
      open = { lang: fence[2] ?? '', section, lines: [] };
    } else if (line.startsWith('#')) section = line.replace(/^#+\s*/, '');
  }
  return blocks;
}

/** The one block that `pick` selects: the test fails, naming it, when the README has none or several. */
function block(pick: (b: Block) => boolean, what: string): Block {
  const found = codeBlocks(README).filter(pick);
  expect(found.length, `the README's ${what}`).toBe(1);
  return found[0] as Block;
}

/** The `$ ` commands of a console block, each with the output the README shows after it. */
function commandsOf(b: Block): { command: string; shown: string[] }[] {
  const out: { command: string; shown: string[] }[] = [];
  for (const line of b.lines) {
    if (line.startsWith('$ ')) out.push({ command: line.slice(2), shown: [] });
    else out.at(-1)?.shown.push(line);
  }
  return out;
}

interface Shell {
  code: number;
  stdout: string;
  stderr: string;
}

const noNobody = unavailable(import.meta.filename, 'nobody');
const noClaude = unavailable(import.meta.filename, 'claude-cli');

describe.skipIf(
  noNobody !== null || noClaude !== null || fullTierOnly(import.meta.filename, "the README's steps, replayed"),
)('the README, followed by a user who is not root, verbatim', () => {
  it(
    'installs warren, makes a first task without reinstalling its dependencies, runs a real agent and resumes it',
    { timeout: 600_000 },
    async () => {
      const mirror = await startNpmMirror(ROOT);
      const server = await startModelServer();
      const base = tmpDir('warren-readme-');
      fs.chmodSync(base, 0o755);
      const home = path.join(base, 'home');
      const app = path.join(home, 'my-app');
      fs.mkdirSync(app, { recursive: true });
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, home]);
      const env: Record<string, string> = {
        HOME: home,
        USER: 'nobody',
        LANG: 'C.UTF-8',
        PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
        ...mirror.env,
      };
      /** One shell as uid 65534, asynchronous: the mirror and the model server answer from this process. */
      const sh = (cwd: string, script: string, extra: Record<string, string> = {}): Promise<Shell> => {
        const vars = Object.entries({ ...env, ...extra }).map(([k, v]) => `${k}=${v}`);
        return new Promise((resolve) => {
          execFile(
            'setpriv',
            [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'env', '-i', ...vars, 'sh', '-ec', script],
            { cwd, encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
            (err, stdout, stderr) =>
              resolve({
                code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
                stdout,
                stderr,
              }),
          );
        });
      };
      try {
        // ── Install: the README's block, from the packed tarball of this checkout.
        const install = block((b) => b.section === 'Install' && b.lang === 'sh', 'install block');
        const [build, ...rest] = install.lines;
        // Its first line clones, builds once and packs; this checkout is built, and packed the same way.
        expect(build).toMatch(/&& npm ci && npm pack --ignore-scripts$/);
        execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', home], { cwd: ROOT, stdio: 'ignore' });
        execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, home]);
        const installed = await sh(home, rest.join('\n'));
        expect(installed.code, `${installed.stdout}\n${installed.stderr}\nmisses: ${mirror.misses.join(', ')}`).toBe(0);
        expect(installed.stdout.trim().split('\n').at(-1)).toBe(
          (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
        );
        // Under the user's own prefix; nothing compiled (the prebuilt binary came from the mirror).
        expect(fs.lstatSync(path.join(home, '.local/bin/warren')).uid).toBe(NOBODY);
        expect(installed.stderr).not.toMatch(/gyp|not yet covered by allowScripts:\n.*better-sqlite3/);

        // As the profile line leaves it: the installed warren first; the agent CLI on PATH too.
        const user = { PATH: `${home}/.local/bin:${AGENT_CLI_BIN}:${env.PATH}` };
        // The pages the hints name are in the package: `warren help configuration` prints one.
        const help = await sh(home, 'warren help configuration', user);
        expect(help.stdout).toBe(fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8'));

        // ── A repository whose node_modules npm installed from its lockfile, with the README's warren.yaml.
        const yaml = block((b) => b.lang === 'yaml' && b.lines.some((l) => l.includes('mode: cow')), 'warren.yaml');
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
        const first = commandsOf(block((b) => b.lines[0]?.startsWith('$ warren trust --yes') === true, 'first task'));
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
        const agent = commandsOf(block((b) => b.lines.some((l) => l.includes('--agent claude')), 'agent block'));
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
        unmountUnder(base);
      }
    },
  );
});
