import fs from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import type { ModelServer } from './model-server.js';

/** The real agent CLIs the tests run (test/agent-clis): how each is pointed at the scripted model server. */

export type RealAgent = 'claude' | 'codex' | 'gemini';

export const REAL_AGENTS: readonly RealAgent[] = ['claude', 'codex', 'gemini'];

/** What each CLI needs to reach the scripted server: environment, or the user's own config (copied into the task's state folder by warren). */
export function pointAt(agent: RealAgent, server: ModelServer, userHome: string): Record<string, string> {
  if (agent === 'claude') return { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'scripted' };
  if (agent === 'gemini') return { GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'scripted' };
  fs.mkdirSync(path.join(userHome, '.codex'));
  fs.writeFileSync(
    path.join(userHome, '.codex', 'config.toml'),
    [
      'model_provider = "scripted"',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${server.url}/v1"`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  return { OPENAI_API_KEY: 'scripted' };
}

/**
 * Codex refuses to set up its own sandbox's helpers under the system temp folder ("Refusing to
 * create helper binaries under temporary dir"), and its state folder lives under WARREN_HOME:
 * its WARREN_HOME is made under /var/tmp, as a real ~/.warren would be outside /tmp.
 */
export function warrenHomeFor(agent: RealAgent, fallback: string): string {
  if (agent !== 'codex') return fallback;
  const dir = fs.realpathSync(fs.mkdtempSync('/var/tmp/warren-codex-home-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
