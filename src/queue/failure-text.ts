/**
 * What a gate's log says failed, without what it says passed (issue 41): jest's `PASS
 * test/rp-weekday.test.js` named the file a task had only added, and made that task "likely
 * broke the gate". Reads the output of jest, vitest, mocha, pytest, go test and TAP (node:test,
 * tap, prove) line by line, dropping a passing test's lines and keeping everything else —
 * output of a runner it does not know is kept whole, so a guess is never lost to the filter.
 * Pure.
 */

/** A line that reports a pass, whatever runner printed it. */
const PASS_LINES: readonly RegExp[] = [
  /^\s*[✓✔√]\s/, // vitest's passing file, mocha's and jest --verbose's passing tests, node's spec reporter
  /^\s*\d+ passing\b/, // mocha's summary
  /(^|\s)(PASSED|XPASS)(\s|$)/, // pytest -v (`path::test PASSED [ 50%]`) and -rA (`PASSED path::test`)
  /^\S+\.py\s+[.sx]+\s*(\[\s*\d+%\])?\s*$/, // pytest's progress line of a file with no F or E
  /^\s*--- (PASS|SKIP):/, // go test -v, a passing or skipped test
  /^=== (RUN|PAUSE|CONT|NAME)\s/, // go test -v, a test starting
  /^PASS$/, // go test's package verdict
  /^ok\s+\S+\s+(\(cached\)|[\d.]+s|\[no test files\])/, // go test's passing package
  /^\s*# Subtest: /, // TAP (node:test names each file so)
];

/** jest's result line of a test file: the lines after a PASS one, up to the next result or the summary, are that file's. */
const JEST_RESULT = /^\s*(PASS|FAIL)\s+\S/;
const JEST_SUMMARY = /^(Test Suites:|Tests:|Snapshots:|Time:|Ran all test suites|Summary of all failing tests)/;
/** TAP's passing test point, which a YAML block (`---` … `...`) may follow. */
const TAP_OK = /^\s*ok\s+\d+\b/;
/** vitest's console output of a test (`stdout | test/a.test.ts > name`), up to a blank line. */
const VITEST_CONSOLE = /^(stdout|stderr) \| \S/;
/** go test -v: a test's lines run from its `=== RUN` to its `--- PASS` or `--- FAIL`. */
const GO_RUN = /^=== RUN\s/;
const GO_END = /^\s*--- (PASS|FAIL|SKIP):/;

type Mode = 'normal' | 'jest-pass' | 'console' | 'tap-ok' | 'tap-yaml';

/** The commands' output, without the header lines that quote each command (which may name any file) and without what passed. */
export function failureText(log: string): string {
  const out: string[] = [];
  let mode: Mode = 'normal';
  let goTest: string[] | null = null; // the lines of a go test -v test whose outcome is not known yet
  const keep = (line: string): void => {
    if (goTest) goTest.push(line);
    else out.push(line);
  };
  for (const line of log.split('\n')) {
    if (line.startsWith('### ')) {
      mode = 'normal';
      if (goTest) out.push(...goTest);
      goTest = null;
      continue;
    }
    if (mode === 'tap-yaml') {
      if (line.trim() === '...') mode = 'normal';
      continue;
    }
    if (mode === 'tap-ok') {
      mode = 'normal';
      if (line.trim() === '---') {
        mode = 'tap-yaml';
        continue;
      }
    }
    if (mode === 'console') {
      if (line.trim() === '') mode = 'normal';
      continue;
    }
    if (mode === 'jest-pass' && !JEST_RESULT.test(line) && !JEST_SUMMARY.test(line)) continue;
    mode = 'normal';
    if (/^\s*PASS\s+\S/.test(line)) {
      mode = 'jest-pass';
      continue;
    }
    if (VITEST_CONSOLE.test(line)) {
      mode = 'console';
      continue;
    }
    if (TAP_OK.test(line)) {
      mode = 'tap-ok';
      continue;
    }
    if (GO_RUN.test(line)) {
      goTest ??= [];
      continue;
    }
    const end = GO_END.exec(line);
    if (end && goTest) {
      if (end[1] === 'FAIL') out.push(...goTest, line);
      goTest = null;
      continue;
    }
    if (PASS_LINES.some((p) => p.test(line))) continue;
    keep(line);
  }
  if (goTest) out.push(...goTest);
  return out.join('\n');
}
