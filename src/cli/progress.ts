import { terminalText } from '../util/terminal-text.js';
import type { StepReport } from '../workspace/reporter.js';
import type { Paint } from './colour.js';

/** The terminal the steps are drawn on: its width, when it says. */
export type Terminal = NodeJS.WritableStream & { columns?: number };

/** How often a running step's seconds are redrawn (only when the shown text changes). */
const TICK_MS = 250;
/** Erase the line the cursor is on and go to its start. */
const CLEAR = '\r\x1b[2K';

interface Running {
  label: string;
  startedAt: number;
  ended: boolean;
}

/**
 * Steps (`Reporter.step`) shown on a terminal as they run, one line each: `  label… 3 s` while
 * it runs (the seconds redrawn in place), then `  label… done in 3.4 s` or `failed after 2 s`.
 * Everything else warren writes on that terminal passes here first, so that no live line is
 * ever mixed into it: a line of warren's is printed above the live one (`line`), a command's
 * output after it (`beforeOutput`: the step's line is then left as it is, and its end said on a
 * line of its own). Steps begun while another runs each get their own line. On a terminal that
 * cannot redraw (`TERM=dumb`) the same lines are written once, without the counting.
 */
export class StepLines {
  /** The step whose line is on the screen, unfinished, the cursor at its end. */
  private current: Running | null = null;
  /** What of the current step's line is drawn. */
  private drawn = '';
  private readonly running = new Set<Running>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: Terminal,
    private readonly paint: Paint,
    private readonly redraw: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  start(label: string): StepReport {
    this.leave();
    const step: Running = { label: terminalText(label, 'line'), startedAt: this.now(), ended: false };
    this.running.add(step);
    this.current = step;
    this.draw();
    if (this.redraw && this.timer === null) {
      this.timer = setInterval(() => this.draw(), TICK_MS);
      this.timer.unref();
    }
    return {
      done: (note) => this.end(step, this.paint.green(note === undefined ? 'done' : terminalText(note, 'line')), 'in'),
      fail: (why) =>
        this.end(step, this.paint.red(why === undefined ? 'failed' : `failed (${terminalText(why, 'line')})`), 'after'),
    };
  }

  /** Prints warren's own line (made safe already, ending in a newline) above the live step. */
  line(text: string): void {
    if (this.redraw) this.erase();
    else this.leave();
    this.out.write(text);
    this.draw();
  }

  /** Before a command's output reaches the terminal: the live step's line is left as it is. */
  beforeOutput(): void {
    this.leave();
  }

  /** Before warren prints its result or refusal: no live line stays, and nothing is counted any more. */
  settle(): void {
    this.leave();
    this.stopTimer();
  }

  private end(step: Running, how: string, preposition: string): void {
    if (step.ended) return;
    step.ended = true;
    this.running.delete(step);
    const said = `${how} ${this.paint.dim(`${preposition} ${elapsed(this.now() - step.startedAt)}`)}`;
    if (this.current === step && !this.redraw && this.drawn !== '') {
      this.out.write(` ${said}\n`);
      this.drawn = '';
      this.current = null;
    } else {
      if (this.current === step) this.current = null;
      if (this.redraw) this.erase();
      else this.leave();
      this.out.write(`  ${step.label}… ${said}\n`);
      this.draw();
    }
    if (this.running.size === 0) this.stopTimer();
  }

  /** Draws the current step's line (again, when its seconds changed). */
  private draw(): void {
    const step = this.current;
    if (step === null) return;
    if (!this.redraw) {
      if (this.drawn === '') this.out.write((this.drawn = `  ${step.label}…`));
      return;
    }
    const seconds = Math.floor((this.now() - step.startedAt) / 1000);
    const text = fit(`  ${step.label}…`, seconds >= 1 ? ` ${seconds} s` : '', this.out.columns);
    if (text.line + text.seconds === this.drawn) return;
    this.out.write(`${CLEAR}${text.line}${this.paint.dim(text.seconds)}`);
    this.drawn = text.line + text.seconds;
  }

  /** Takes the live line off the screen (it is drawn again after). */
  private erase(): void {
    if (this.drawn === '') return;
    this.out.write(CLEAR);
    this.drawn = '';
  }

  /** Ends the live line where it is: the step goes on, its end said on a line of its own. */
  private leave(): void {
    if (this.drawn !== '') this.out.write('\n');
    this.drawn = '';
    this.current = null;
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

/** The live line within one row of the terminal (a wrapped line could not be erased): the label cut with `…`. */
function fit(line: string, seconds: string, columns: number | undefined): { line: string; seconds: string } {
  // A terminal of unknown width (0: a pseudo-terminal nobody sized) is taken as 80 columns.
  const room = (columns !== undefined && columns > 0 ? columns : 80) - 1 - seconds.length;
  return { line: line.length <= room ? line : `${line.slice(0, Math.max(0, room - 1))}…`, seconds };
}

/** `0.4 s`, `12 s`, `2 min 5 s`. */
export function elapsed(ms: number): string {
  if (ms < 10_000) return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
