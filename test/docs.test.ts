import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandDocs, GENERATED_MARK, renderDocs } from '../src/cli/docs-render.js';
import { COMMANDS } from '../src/cli/commands/all.js';
import { helpTopics } from '../src/cli/commands/help.js';
import { buildProgram } from '../src/cli/main.js';
import { COMMAND_REFERENCE } from '../src/cli/reference.js';
import { ERROR_CODES } from '../src/errors.js';
import { makeRepo } from './helpers/repo.js';

/**
 * The docs drift test (worktrunk's readme_sync): every generated page is rendered in memory from
 * the current command definitions and compared with the file on disk, and the hand-written pages
 * are held to their links and the README to its size.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const REGENERATE = 'run `npm run docs` and commit the result';
const program = buildProgram(COMMANDS, async () => {});
const docs = commandDocs(program);

function read(rel: string): string | null {
  const file = path.join(ROOT, rel);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
}

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return markdownFiles(rel);
    return e.name.endsWith('.md') ? [rel] : [];
  });
}

/** The flags in the rows of a command page's "Options" table. */
function documentedOptions(page: string): string[] {
  const section = page.split(/^## /m).find((part) => part.startsWith('Options')) ?? '';
  return [...section.matchAll(/^\| `(-[^`]+)`/gm)].map((m) => m[1] ?? '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

function anchors(markdown: string): Set<string> {
  const headings = withoutCode(markdown.replace(/`/g, '')).match(/^#{1,6} .*$/gm) ?? [];
  return new Set(headings.map((h) => slug(h.replace(/^#+ /, ''))));
}

/** Relative links (and images) whose file, or whose #anchor in that file, does not exist. */
function brokenLinks(rel: string): string[] {
  const text = read(rel) ?? '';
  const broken: string[] = [];
  for (const m of withoutCode(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [file = '', anchor] = target.split('#');
    const targetRel = file === '' ? rel : path.posix.normalize(path.posix.join(path.posix.dirname(rel), file));
    const content = read(targetRel);
    if (content === null) {
      broken.push(`${rel}: ${target} (no file ${targetRel})`);
      continue;
    }
    if (anchor && targetRel.endsWith('.md') && !anchors(content).has(anchor))
      broken.push(`${rel}: ${target} (no heading #${anchor} in ${targetRel})`);
  }
  return broken;
}

describe('docs', () => {
  const rendered = renderDocs(program);

  it('every command has an entry in src/cli/reference.ts, and every entry a command', () => {
    const names = docs.map((d) => d.name);
    expect(
      names.filter((n) => !(n in COMMAND_REFERENCE)),
      'commands without an entry in src/cli/reference.ts',
    ).toEqual([]);
    expect(
      Object.keys(COMMAND_REFERENCE).filter((n) => !names.includes(n)),
      'entries in src/cli/reference.ts for commands that do not exist',
    ).toEqual([]);
  });

  it('every command has a page that names each of its options', () => {
    const problems: string[] = [];
    for (const doc of docs) {
      const page = read(doc.file);
      if (page === null) {
        problems.push(`\`warren ${doc.name}\` has no page ${doc.file}`);
        continue;
      }
      const flags = doc.command.options.map((o) => o.flags);
      for (const flag of flags) {
        if (!page.includes(`\`${flag}\``))
          problems.push(`${doc.file} does not document option ${flag} of \`warren ${doc.name}\``);
      }
      for (const flag of documentedOptions(page)) {
        if (!flags.includes(flag))
          problems.push(`${doc.file} documents option ${flag}, which \`warren ${doc.name}\` no longer has`);
      }
      for (const arg of doc.command.registeredArguments) {
        if (!page.includes(arg.name()))
          problems.push(`${doc.file} does not document argument <${arg.name()}> of \`warren ${doc.name}\``);
      }
    }
    expect(problems, REGENERATE).toEqual([]);
  });

  it('has no page for a command that does not exist', () => {
    const orphans = markdownFiles('docs/commands').filter((rel) => !rendered.has(rel));
    expect(orphans, `pages for commands that no longer exist: ${REGENERATE} (it deletes them)`).toEqual([]);
  });

  it('docs/errors.md documents every error code', () => {
    const page = read('docs/errors.md') ?? '';
    const missing = Object.keys(ERROR_CODES).filter((code) => !page.includes(`### \`${code}\``));
    expect(missing, `codes missing from docs/errors.md: ${REGENERATE}`).toEqual([]);
  });

  it('every generated page matches what the current definitions render', () => {
    const stale = [...rendered].filter(([rel, content]) => read(rel) !== content).map(([rel]) => rel);
    expect(stale, `stale generated pages: ${REGENERATE}`).toEqual([]);
    for (const content of rendered.values()) expect(content.startsWith(GENERATED_MARK)).toBe(true);
  });

  it('README.md stays under 15 KB', () => {
    const bytes = fs.statSync(path.join(ROOT, 'README.md')).size;
    expect(bytes, 'README.md is 15,000 bytes or more: move detail into docs/').toBeLessThan(15_000);
  });

  it('docs/benchmarks.md stays under 15 KB', () => {
    const bytes = fs.statSync(path.join(ROOT, 'docs/benchmarks.md')).size;
    expect(bytes, 'docs/benchmarks.md is 15,000 bytes or more: older runs belong to its git history').toBeLessThan(
      15_000,
    );
  });

  it('relative links in README.md and docs/ point to files and headings that exist', () => {
    const broken = ['README.md', ...markdownFiles('docs')].flatMap(brokenLinks);
    expect(broken).toEqual([]);
  });
});

describe('what the docs quote', () => {
  it('the refusals the command pages show are what warren prints', async () => {
    const repo = makeRepo();
    for (const [command, args] of [['show', ['show', 'nope']]] as const) {
      const real = await repo.warren('--json', ...args);
      expect(real.code).toBe(2); // an unknown task is bad input
      expect(COMMAND_REFERENCE[command]?.example).toContain(
        `$ warren --json ${args.join(' ')}\n${real.stdout}[exit ${real.code}]`,
      );
    }
  });

  it("docs/testing.md's count of test files is the suite's", () => {
    const root = path.resolve(import.meta.dirname, '..');
    const files = fs.readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' }).filter((f) => {
      return f.endsWith('.test.ts') && !f.split(path.sep).includes('node_modules');
    });
    const stated = /`npm test` \| everything: (\d+) files/.exec(
      fs.readFileSync(path.join(root, 'docs', 'testing.md'), 'utf8'),
    );
    expect(Number(stated?.[1])).toBe(files.length);
  });
});

describe('warren help: the pages an installed warren carries', () => {
  const root = path.resolve(import.meta.dirname, '..');

  it('prints a shipped page by topic, and every `warren help X` a message or hint names is one', async () => {
    const repo = makeRepo();
    const page = await repo.warrenJson<{ text: string }>('help', 'configuration');
    expect(page.code).toBe(0);
    expect(page.json.text).toBe(fs.readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8'));
    expect((await repo.warren('help', 'hooks', 'install')).stdout).toContain('`warren hooks install`\n=====');
    expect((await repo.warren('help', 'nope')).code).toBe(2);
    const topics = helpTopics(root);
    const named = new Set<string>();
    for (const file of fs.readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      for (const m of fs.readFileSync(path.join(root, 'src', file), 'utf8').matchAll(/`warren help ([a-z/-]+)`/g))
        named.add(m[1] ?? '');
    }
    expect([...named].filter((t) => !topics.has(t))).toEqual([]);
    expect(named.size).toBeGreaterThan(2);
    // No message points at a docs/ path an installed user may not have.
    const docsPaths = fs
      .readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
      .filter(
        (f) => f.endsWith('.ts') && !f.startsWith(`cli${path.sep}reference`) && f !== `cli${path.sep}docs-render.ts`,
      )
      .flatMap((f) =>
        [
          ...fs
            .readFileSync(path.join(root, 'src', f), 'utf8')
            .matchAll(/^(?!\s*(\/\/|\*|\/\*)).*\bdocs\/[a-z-]+(\/[a-z-]+)?\.md/gm),
        ].map((m) => `${f}: ${m[0].trim()}`),
      );
    expect(docsPaths).toEqual([]);
  });

  it("package.json's files ship the pages", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('docs/**/*.md');
  });
});

describe('slug', () => {
  it.each([
    ['What changed: `warren status ID`', 'what-changed-warren-status-id'],
    ['`HOOKS_CHANGED`', 'hooks_changed'],
    ['Sandbox: `sandbox: none | bwrap`', 'sandbox-sandbox-none--bwrap'],
    ['After landing: `rm`', 'after-landing-rm'],
  ])('%s → %s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });
});
