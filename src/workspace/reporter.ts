/**
 * How library code speaks to whoever called it. It never writes to a terminal itself: the CLI
 * passes one that prints on stderr (and shows a command's output on its own stdout and
 * stderr), the dashboard one that keeps quiet (the run logs and events hold everything), a
 * program embedding warren whatever it likes.
 */
export interface Reporter {
  /** One line for people: progress, a warning, what warren did. */
  line(text: string): void;
  /** Where a supervised command's output is shown live, besides its log. */
  output: RunOutput;
  /**
   * A step that may take a while (a service started, a setup command run) has begun: the CLI
   * shows it live on a terminal, one line per step with its time once it ends, and nothing
   * elsewhere (a pipe, `--json`). Optional: a reporter without it hears nothing of steps, which
   * are also in the events. Library code starts one through `startStep` or `reportStep`.
   */
  step?(label: string): StepReport;
}

/** The end of a step begun with `Reporter.step`: each said once; what is said after the first is ignored. */
export interface StepReport {
  /** It did its work; `note` says how, when there is more to say (`skipped: nothing to do`). */
  done(note?: string): void;
  /** It failed (a throw, or a command's non-zero exit); `why` in a few words (`exit 1`). */
  fail(why?: string): void;
}

export interface RunOutput {
  stdout: NodeJS.WritableStream | null;
  stderr: NodeJS.WritableStream | null;
}

export const NO_OUTPUT: RunOutput = { stdout: null, stderr: null };

export const SILENT: Reporter = { line: () => undefined, output: NO_OUTPUT };

const UNHEARD: StepReport = { done: () => undefined, fail: () => undefined };

/** Begins a step on `reporter` (nothing, when it does not listen to steps); the caller ends it. */
export function startStep(reporter: Reporter, label: string): StepReport {
  return reporter.step?.(label) ?? UNHEARD;
}

/** Runs `work` as one step: done when it resolves, failed when it throws (the error goes on as it was). */
export async function reportStep<T>(reporter: Reporter, label: string, work: () => Promise<T>): Promise<T> {
  const step = startStep(reporter, label);
  try {
    const result = await work();
    step.done();
    return result;
  } catch (err) {
    step.fail();
    throw err;
  }
}
