import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { WarrenError } from '../../errors.js';
import type { Register } from '../command.js';
import { markdownForTerminal } from '../markdown-text.js';

/**
 * `warren help [TOPIC]`: a command's usage, or one page of the documentation shipped in the
 * package (`docs/**\/*.md`), so that an installed warren's hints can point at pages its user has.
 * A page is shown as text for a terminal (src/cli/markdown-text.ts); `--json` has its Markdown.
 */

/** The package's root: the folder above this file (src/ or the bundle in dist/) that holds package.json. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Topic → page: `docs/commands/NAME.md` by its command's name, `docs/design/NAME.md` and `docs/NAME.md`. */
export function helpTopics(root: string = packageRoot()): Map<string, string> {
  const topics = new Map<string, string>();
  for (const dir of ['docs/commands', 'docs/design', 'docs']) {
    const folder = path.join(root, dir);
    if (!fs.existsSync(folder)) continue;
    for (const name of fs.readdirSync(folder).sort()) {
      if (!name.endsWith('.md') || name === 'README.md') continue;
      // A design page named as a command (trust) is `design/trust`; the command's page keeps the name.
      const topic = name.slice(0, -3);
      topics.set(topics.has(topic) ? `design/${topic}` : topic, path.join(dir, name));
    }
  }
  return topics;
}

function commandNamed(program: Command, words: readonly string[]): Command | null {
  let at: Command = program;
  for (const word of words) {
    const next = at.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) return null;
    at = next;
  }
  return at === program ? null : at;
}

export const registerHelp: Register = (program, run) => {
  program.helpCommand(false);
  program
    .command('help')
    .description(
      "a command's usage, or a page of the documentation shipped with warren as text for a terminal (e.g. `warren help configuration`)",
    )
    .argument('[topic...]', 'a command (`new`, `hooks install`) or a page: configuration, agents, errors, execution, …')
    .action((words: string[]) =>
      run(async () => {
        const root = packageRoot();
        const topics = helpTopics(root);
        const pages = [...topics].filter(([, file]) => !file.startsWith('docs/commands/')).map(([t]) => t);
        const list = `pages: ${pages.sort().join(', ')}; or a command's name for its page`;
        if (words.length === 0)
          return { data: { topics: [...topics.keys()] }, human: `${program.helpInformation()}\n${list}`, paged: true };
        const topic = words.length === 1 && words[0]?.startsWith('design/') ? words[0] : words.join('-');
        const page = topics.get(topic);
        const command = commandNamed(program, words);
        if (command && !page)
          return { data: { topic, usage: command.helpInformation() }, human: command.helpInformation() };
        if (!page)
          throw new WarrenError('USAGE', `no command or page named ${JSON.stringify(words.join(' '))}.`, {
            hint: `Run \`warren help\` for the commands; ${list}.`,
          });
        const text = fs.readFileSync(path.join(root, page), 'utf8');
        const byFile = new Map([...topics].map(([t, file]) => [file, t]));
        byFile.set('docs/commands/README.md', '');
        const human = markdownForTerminal(text, { page, topicOf: (file) => byFile.get(file) ?? null });
        return { data: { topic, file: path.join(root, page), text }, human, paged: true };
      }),
    );
};
