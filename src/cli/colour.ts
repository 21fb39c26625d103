/**
 * Colour on a terminal, as git has it: on where the output is a terminal, off in a pipe, a file
 * and `--json`; `NO_COLOR` (any non-empty value, no-color.org) turns it off and `FORCE_COLOR`
 * on, even in a pipe (`FORCE_COLOR=0` or `false`: off). FORCE_COLOR wins when both are set, as
 * in Node's own rule (tty.getColorDepth): it is the more deliberate of the two.
 *
 * Colour is only ever put around text that was made safe to print already (terminalText,
 * src/util/terminal-text.ts): an agent's text has every ESC in it shown as `\x1b` before a
 * colour is added, so it can carry no colour, nor any other sequence, of its own.
 *
 * Written here rather than taken from a library: it is six SGR pairs, and the decision is
 * warren's own — made per stream (stdout and stderr may differ), with `--json` in it — which
 * picocolors (it asks process.stdout and argv) and util.styleText (Node ≥ 20.12, and in Node
 * 20 it colours whatever the stream) do not make.
 */

export type Hue = 'red' | 'green' | 'yellow' | 'cyan' | 'bold' | 'dim';

/** Each hue's start and its own end (not a full reset, so that a hue inside another ends only itself). */
const SGR: Record<Hue, readonly [number, number]> = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  bold: [1, 22],
  dim: [2, 22],
};

/** Puts a hue around text already made safe to print; the identity when colour is off. */
export type Paint = Readonly<Record<Hue, (shown: string) => string>> & { readonly on: boolean };

export function painter(on: boolean): Paint {
  const hue = (h: Hue) => (shown: string) =>
    on && shown !== '' ? `\x1b[${SGR[h][0]}m${shown}\x1b[${SGR[h][1]}m` : shown;
  return {
    on,
    red: hue('red'),
    green: hue('green'),
    yellow: hue('yellow'),
    cyan: hue('cyan'),
    bold: hue('bold'),
    dim: hue('dim'),
  };
}

export const NO_PAINT = painter(false);

/** Whether what warren writes on `stream` is coloured (see the module comment). */
export function colourWanted(
  stream: NodeJS.WritableStream,
  json: boolean,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (json) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if ((env.NO_COLOR ?? '') !== '') return false;
  return (stream as { isTTY?: boolean }).isTTY === true && env.TERM !== 'dumb';
}
