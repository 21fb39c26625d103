import { describe, expect, it } from 'vitest';
import { failureText } from '../../src/queue/failure-text.js';
import { namesAny } from '../../src/queue/suspects.js';
import { importTargets, namedSourceFiles, relativeSpecifiers, repoPathsOf } from '../../src/queue/failing-imports.js';

/**
 * The culprit guess reads failures, not passes (issue 41): each runner's literal output with one
 * passing test file (added by an innocent task) beside a failing one (the culprit's).
 */

const JEST = `
> luxon@3.5.0 test
> jest

PASS test/datetime/rp-weekday.test.js
  ✓ weekday of a rp date (3 ms)

  console.log
    debugging

      at Object.log (test/datetime/rp-weekday.test.js:4:11)

FAIL test/datetime/format.test.js
  ● DateTime#toFormat › formats weekdays

    expect(received).toBe(expected) // Object.is equality

    Expected: "Mon"
    Received: "Sun"

      at Object.toBe (test/datetime/format.test.js:13:32)
      at weekdayName (src/impl/english.js:42:10)

PASS test/info/zones.test.js

Test Suites: 1 failed, 2 passed, 3 total
Tests:       1 failed, 2 passed, 3 total
`;

const VITEST = `
 ✓ test/rp-weekday.test.ts (1 test) 2ms
stdout | test/rp-weekday.test.ts > weekday
debugging test/rp-weekday.test.ts

 ❯ test/format.test.ts (1 test | 1 failed) 5ms
   × formats weekdays 4ms
     → expected 'Sun' to be 'Mon'

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/format.test.ts > formats weekdays
AssertionError: expected 'Sun' to be 'Mon' // Object.is equality
 ❯ test/format.test.ts:13:32
 ❯ weekdayName src/impl/english.ts:42:10

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 1 passed (2)
`;

const MOCHA = `

  weekday
    ✔ test/rp-weekday.spec.js: the rp weekday

  format
    1) formats weekdays


  1 passing (8ms)
  1 failing

  1) format
       formats weekdays:
     AssertionError [ERR_ASSERTION]: 'Sun' == 'Mon'
      at Context.<anonymous> (test/format.spec.js:13:12)
      at weekdayName (src/impl/english.js:42:10)
`;

const PYTEST_VERBOSE = `============================= test session starts ==============================
collected 2 items

tests/test_weekday.py::test_rp_weekday PASSED                            [ 50%]
tests/test_format.py::test_formats_weekdays FAILED                       [100%]

=================================== FAILURES ===================================
____________________________ test_formats_weekdays _____________________________

    def test_formats_weekdays():
>       assert weekday_name(1) == "Mon"
E       AssertionError: assert 'Sun' == 'Mon'

tests/test_format.py:13: AssertionError
src/english.py:42: in weekday_name
=========================== short test summary info ============================
FAILED tests/test_format.py::test_formats_weekdays - AssertionError: assert 'Sun' == 'Mon'
========================= 1 failed, 1 passed in 0.05s ==========================
`;

const PYTEST = `============================= test session starts ==============================
collected 5 items

tests/test_weekday.py ...                                                [ 60%]
tests/test_format.py .F                                                  [100%]

=========================== short test summary info ============================
FAILED tests/test_format.py::test_formats_weekdays - AssertionError: assert 'Sun' == 'Mon'
`;

const GO_VERBOSE = `=== RUN   TestRpWeekday
    weekday_test.go:9: checked 7 days
--- PASS: TestRpWeekday (0.00s)
=== RUN   TestFormat
=== RUN   TestFormat/weekdays
    format_test.go:13: got "Sun", want "Mon"
    --- FAIL: TestFormat/weekdays (0.00s)
--- FAIL: TestFormat (0.00s)
FAIL
FAIL	example.com/luxon/format	0.003s
ok  	example.com/luxon/weekday	0.002s
`;

const GO = `--- FAIL: TestFormat (0.00s)
    format_test.go:13: got "Sun", want "Mon"
FAIL
FAIL	example.com/luxon/format	0.003s
ok  	example.com/luxon/weekday	(cached)
`;

const TAP = `TAP version 13
# Subtest: test/rp-weekday.test.js
ok 1 - test/rp-weekday.test.js
  ---
  duration_ms: 41.2
  location: '/w/test/rp-weekday.test.js:1:1'
  ...
# Subtest: test/format.test.js
not ok 2 - test/format.test.js
  ---
  duration_ms: 45.1
  location: '/w/test/format.test.js:1:1'
  failureType: 'subtestsFailed'
  ...
1..2
# pass 1
# fail 1
`;

describe('the culprit guess reads failures, not passes (pure, literal runner output)', () => {
  it.each([
    // [runner, output, paths the failure names, paths only a pass names]
    [
      'jest',
      JEST,
      ['test/datetime/format.test.js', 'src/impl/english.js'],
      ['test/datetime/rp-weekday.test.js', 'test/info/zones.test.js'],
    ],
    ['vitest', VITEST, ['test/format.test.ts', 'src/impl/english.ts'], ['test/rp-weekday.test.ts']],
    ['mocha', MOCHA, ['test/format.spec.js', 'src/impl/english.js'], ['test/rp-weekday.spec.js']],
    ['pytest -v', PYTEST_VERBOSE, ['tests/test_format.py', 'src/english.py'], ['tests/test_weekday.py']],
    ['pytest', PYTEST, ['tests/test_format.py'], ['tests/test_weekday.py']],
    [
      'go test -v',
      GO_VERBOSE,
      ['format_test.go', 'example.com/luxon/format'],
      ['weekday_test.go', 'example.com/luxon/weekday'],
    ],
    ['go test', GO, ['format_test.go', 'example.com/luxon/format'], ['example.com/luxon/weekday']],
    ['TAP (node:test)', TAP, ['test/format.test.js'], ['test/rp-weekday.test.js']],
  ])('%s', (_runner, output, failing, passing) => {
    const text = failureText(`### verify test: npm test\n${output}`);
    for (const p of failing) expect(namesAny(text, [p]), `${p} is named by the failure`).toBe(true);
    for (const p of passing) expect(namesAny(text, [p]), `${p} only passed`).toBe(false);
  });

  it("keeps output it does not recognise, and drops the command's header line", () => {
    expect(failureText('### verify gate: ! test -e culprit.txt\nFAIL broken-t05.txt\n')).toBe('FAIL broken-t05.txt\n');
    expect(failureText('make: *** [Makefile:3: lib/parse.o] Error 1\n')).toBe(
      'make: *** [Makefile:3: lib/parse.o] Error 1\n',
    );
    // A go test whose outcome the log never gives (killed by the timeout) is kept.
    expect(failureText('=== RUN   TestHang\n    hang_test.go:3: waiting\n')).toBe('    hang_test.go:3: waiting\n');
  });
});

describe('what the failing tests import (pure): the source files a failure names, and their relative imports', () => {
  it('finds the source files a runner names, without line numbers, URLs or other words', () => {
    const text = [
      'FAIL test/m0.test.js',
      '  ● m0 › value',
      '      at Object.<anonymous> (/home/ci/gate-1/packages/p0/test/m0.test.js:3:7)',
      '    ./src/util.ts:12:3 - error TS2345',
      'see https://example.com/x.js and "notes.txt"',
    ].join('\n');
    expect(namedSourceFiles(text).sort()).toEqual(
      ['/home/ci/gate-1/packages/p0/test/m0.test.js', 'src/util.ts', 'test/m0.test.js'].sort(),
    );
    expect(repoPathsOf('test/m0.test.js')).toEqual(['test/m0.test.js']);
    expect(repoPathsOf('/home/ci/gate-1/packages/p0/test/m0.test.js').slice(-3)).toEqual([
      'p0/test/m0.test.js',
      'test/m0.test.js',
      'm0.test.js',
    ]);
    expect(repoPathsOf('../outside.js')).toEqual([]);
  });

  it('reads require, import, dynamic import and re-export specifiers that are relative, not packages', () => {
    const source = [
      "const m0 = require('../src/m0.js');",
      "import { a } from './a';",
      'import b, { c } from "../lib/b";',
      "export * from './re/export';",
      "import './side-effect.css';",
      "const lazy = await import('./lazy.mjs');",
      "import lodash from 'lodash';",
      "const fs = require('node:fs');",
    ].join('\n');
    expect(relativeSpecifiers(source).sort()).toEqual(
      ['../lib/b', '../src/m0.js', './a', './lazy.mjs', './re/export', './side-effect.css'].sort(),
    );
  });

  it('resolves a specifier to the repository paths it may be, never outside the repository', () => {
    expect(importTargets('test/m0.test.js', '../src/m0.js')).toContain('src/m0.js');
    expect(importTargets('test/m0.test.js', '../src/m0.js')).toContain('src/m0.ts');
    expect(importTargets('pkg/test/a.test.ts', '../src/a')).toEqual(
      expect.arrayContaining(['pkg/src/a', 'pkg/src/a.ts', 'pkg/src/a.js', 'pkg/src/a/index.ts']),
    );
    expect(importTargets('test/a.test.js', '../../outside')).toEqual([]);
  });
});
