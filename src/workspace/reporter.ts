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
}

export interface RunOutput {
  stdout: NodeJS.WritableStream | null;
  stderr: NodeJS.WritableStream | null;
}

export const NO_OUTPUT: RunOutput = { stdout: null, stderr: null };

export const SILENT: Reporter = { line: () => undefined, output: NO_OUTPUT };
