import { describe, expect, it } from 'vitest';
import { gateSetupSteps, isInstallStep } from '../src/queue/gate-deps.js';

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
