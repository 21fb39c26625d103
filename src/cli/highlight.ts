import type { Paint } from './colour.js';

/**
 * Colour for what the commands print, applied by the printer to the text as it will be shown:
 * made safe already (terminalText), so the rules below only ever add colour around it. Each
 * reads the shape of warren's own output — which lines are a patch's added ones, which word is
 * a state — never anything an agent's text could turn into a sequence. Pure.
 */

/** A line of warren's on stderr: `warren: warn:` and `warren: error:` coloured as what they are. */
export function paintNotice(shown: string, paint: Paint): string {
  if (!paint.on) return shown;
  return shown.replace(
    /^warren: (warn|error|internal error \(a bug\)):/,
    (_, level: string) => `warren: ${level === 'warn' ? paint.yellow('warn:') : paint.red(`${level}:`)}`,
  );
}

/** A refusal on stderr: the `warren:` that starts it, and its hint. */
export function paintRefusal(paint: Paint): { prefix: string; hint: string } {
  return { prefix: paint.bold(paint.red('warren:')), hint: paint.yellow('hint:') };
}

/** A patch as git prints it: file headers bold, hunk headers cyan, added lines green, removed red. */
export function paintPatch(shown: string, paint: Paint): string {
  if (!paint.on) return shown;
  let header = false;
  return shown
    .split('\n')
    .map((line) => {
      if (line.startsWith('diff --git ') || line.startsWith('diff --cc ')) {
        header = true;
        return paint.bold(line);
      }
      if (header && !line.startsWith('@@')) return paint.bold(line);
      header = false;
      const hunk = /^(@@+ [^@]* @@+)(.*)$/.exec(line);
      if (hunk) return `${paint.cyan(hunk[1] ?? '')}${hunk[2] ?? ''}`;
      if (line.startsWith('+')) return paint.green(line);
      if (line.startsWith('-')) return paint.red(line);
      return line;
    })
    .join('\n');
}

/** `diff --stat`'s table: the status letter, the added and deleted counts; and the summary's. */
export function paintStat(shown: string, paint: Paint): string {
  if (!paint.on) return shown;
  return shown
    .split('\n')
    .map((line) => {
      const row = /^([AMDRCT])(\s+)(\+\d+|bin)(\s+)(-\d+)?/.exec(line);
      if (row) {
        const [all, letter = '', gap = '', added = '', gap2 = '', deleted = ''] = row;
        const hue = letter === 'A' ? paint.green : letter === 'D' ? paint.red : paint.yellow;
        return `${hue(letter)}${gap}${added === 'bin' ? added : paint.green(added)}${gap2}${paint.red(deleted)}${line.slice(all.length)}`;
      }
      const summary = /^(\d+ file\(s\) changed, )(\+\d+) (-\d+)/.exec(line);
      if (summary) {
        const [all, lead = '', added = '', deleted = ''] = summary;
        return `${lead}${paint.green(added)} ${paint.red(deleted)}${line.slice(all.length)}`;
      }
      return line;
    })
    .join('\n');
}

const CHANGE_HUE = {
  added: 'green',
  deleted: 'red',
  removed: 'red',
  modified: 'yellow',
  changed: 'yellow',
} as const;
const SERVICE_HUE = { running: 'green', crashed: 'red', stopped: 'yellow' } as const;

/**
 * `status`: clean or changed, each tracked change's code (untracked and deleted red, added
 * green, the rest yellow), each provisioned change's word, a shared or replaced folder, stale,
 * and each service's state. Which section a line is in is read from the unindented line above it.
 */
export function paintStatus(shown: string, paint: Paint): string {
  if (!paint.on) return shown;
  let section: 'tracked' | 'provisioned' | 'services' | null = null;
  return shown
    .split('\n')
    .map((line) => {
      if (!line.startsWith(' ')) {
        section = line.startsWith('tracked:')
          ? 'tracked'
          : line === 'services:'
            ? 'services'
            : line.startsWith('stale:') || line.startsWith('(')
              ? null
              : 'provisioned';
        return headline(line, paint);
      }
      if (section === 'tracked') {
        const m = /^( {2})(\S{1,2})( .*)$/.exec(line);
        if (!m) return line;
        const code = m[2] ?? '';
        const hue = /[?D]/.test(code) ? paint.red : code.includes('A') ? paint.green : paint.yellow;
        return `${m[1]}${hue(code)}${m[3]}`;
      }
      if (section === 'provisioned') {
        const m = /^( {2})(added|deleted|removed|modified|changed)\b(.*)$/.exec(line);
        return m ? `${m[1]}${paint[CHANGE_HUE[m[2] as keyof typeof CHANGE_HUE]](m[2] ?? '')}${m[3]}` : line;
      }
      if (section === 'services') {
        const m = /^( {2}\S+ {2}\S+ {2})(running|crashed|stopped)\b(.*)$/.exec(line);
        return m ? `${m[1]}${paint[SERVICE_HUE[m[2] as keyof typeof SERVICE_HUE]](m[2] ?? '')}${m[3]}` : line;
      }
      return line;
    })
    .join('\n');
}

function headline(line: string, paint: Paint): string {
  if (line === 'tracked: clean') return `tracked: ${paint.green('clean')}`;
  if (line.startsWith('tracked: ')) return `tracked: ${paint.yellow(line.slice('tracked: '.length))}`;
  if (line === 'stale: no') return `stale: ${paint.green('no')}`;
  if (line.startsWith('stale: ')) return `${paint.red('stale:')}${line.slice('stale:'.length)}`;
  return line
    .replace(/ — (SHARED|not isolated)\b/, (m) => paint.yellow(m))
    .replace(/: (REPLACED)\b/, (_, w: string) => `: ${paint.yellow(w)}`);
}
