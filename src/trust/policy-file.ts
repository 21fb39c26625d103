import fs from 'node:fs';
import path from 'node:path';

/** The signed run policy at the repository root (its signature is FILE.sig). */
export const POLICY_FILE = 'warren.policy.yaml';

export function keyPaths(home: string): { dir: string; privateKey: string; publicKey: string } {
  const dir = path.join(home, 'policy');
  return { dir, privateKey: path.join(dir, 'signing.key'), publicKey: path.join(dir, 'trusted.pub') };
}

/**
 * True when there is a policy or a trusted key, i.e. when a run must load the policy module
 * (YAML and schema parsers, ~100 ms to compile) to verify it or to refuse the mismatch.
 */
export function policyInPlay(home: string, repoRoot: string): boolean {
  return fs.existsSync(path.join(repoRoot, POLICY_FILE)) || fs.existsSync(keyPaths(home).publicKey);
}
