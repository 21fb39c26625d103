import { describe, expect, it } from 'vitest';
import { gateSetupSteps, isInstallStep } from '../src/queue/gate-deps.js';
import { failureText } from '../src/queue/failure-text.js';
import { namesAny } from '../src/queue/suspects.js';

describe("the gate's setup steps", () => {
  it.each([
    ['npm ci', true],
    ['npm install --offline', true],
    ['pnpm install --frozen-lockfile', true],
    ['  yarn', true],
    ['yarn install --immutable', true],
    ['bun install', true],
    ['npm run build', false],
    ['npx prisma generate', false],
    ['make deps', false],
  ])('%j installs: %s', (run, installs) => {
    expect(isInstallStep({ id: 's', run })).toBe(installs);
    expect(isInstallStep({ id: 's', run: run.trim().split(/\s+/) })).toBe(installs);
  });

  it('`gate:` decides over the command: install, always, never', () => {
    expect(isInstallStep({ id: 's', run: 'make deps', gate: 'install' })).toBe(true);
    expect(isInstallStep({ id: 's', run: 'npm ci', gate: false })).toBe(false);
    const setup = [
      { id: 'deps', run: 'npm ci' },
      { id: 'gen', run: 'npm run gen', gate: true as const },
      { id: 'seed', run: 'npm run seed' },
    ];
    expect(gateSetupSteps(setup, false).map((s) => s.id)).toEqual(['gen']);
    expect(gateSetupSteps(setup, true).map((s) => s.id)).toEqual(['deps', 'gen']);
  });
});

describe('the likely culprits of a failing gate', () => {
  it('a path the failure names, as a path: not inside a longer name, not in the header that quotes the command', () => {
    expect(namesAny('FAIL src/impl/util.test.js (3 tests)', ['src/impl/util.test.js'])).toBe(true);
    expect(namesAny('    at f (/w/.queue-x/src/impl/util.js:12:3)', ['src/impl/util.js'])).toBe(true);
    expect(namesAny('FAIL src/impl/util.test.js', ['src/impl/util.js'])).toBe(false);
    expect(namesAny('see myutil.js', ['util.js'])).toBe(false);
    expect(namesAny('x.c failed', ['x.c'])).toBe(false); // too short to tell
    expect(failureText('### verify gate: ! test -e culprit.txt\nFAIL broken-t05.txt\n')).toBe('FAIL broken-t05.txt\n');
  });
});
