import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { WarrenError } from '../errors.js';
import { POLICY_FILE, keyPaths } from '../trust/policy-file.js';
import type { SandboxProfile } from './sandbox.js';

/**
 * The signed run policy: which tasks may run with which sandbox and network. The policy file
 * lives in the repository (`warren.policy.yaml`, with a detached Ed25519 signature in
 * `warren.policy.yaml.sig`); the key that must have signed it lives outside, in
 * `$WARREN_HOME/policy/trusted.pub`, so an agent that can edit the repository cannot re-sign it.
 */

const policySchema = z.strictObject({
  version: z.literal(1),
  expires: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'an ISO date such as 2027-01-01T00:00:00Z'),
  rules: z
    .array(
      z.strictObject({
        tasks: z.string().min(1),
        sandbox: z.array(z.enum(['none', 'bwrap', 'container'])).min(1),
        network: z.boolean().default(false),
      }),
    )
    .min(1),
});
export type Policy = z.infer<typeof policySchema>;

export function keygen(home: string, force = false): { privateKey: string; publicKey: string } {
  const paths = keyPaths(home);
  if (!force && (fs.existsSync(paths.privateKey) || fs.existsSync(paths.publicKey))) {
    throw new WarrenError('POLICY_INVALID', `a policy key already exists in ${paths.dir}; it was left as it was.`, {
      hint: 'Pass --force to replace it (policies signed with the old key then stop verifying).',
    });
  }
  const pair = generateKeyPairSync('ed25519');
  fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(paths.privateKey, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  fs.writeFileSync(paths.publicKey, pair.publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644 });
  return paths;
}

/** Checks the policy parses, then writes `FILE.sig` (base64 Ed25519 over the file's exact bytes). */
export function signPolicy(home: string, file: string): { signature: string; policy: Policy } {
  const bytes = readOrRefuse(file, 'policy');
  const policy = parsePolicy(bytes, file);
  let key: KeyObject;
  try {
    key = createPrivateKey(fs.readFileSync(keyPaths(home).privateKey));
  } catch {
    throw new WarrenError('POLICY_INVALID', `no signing key in ${keyPaths(home).dir}; nothing was signed.`, {
      hint: 'Run `warren policy keygen` first.',
    });
  }
  const signature = `${file}.sig`;
  fs.writeFileSync(signature, `${sign(null, bytes, key).toString('base64')}\n`);
  return { signature, policy };
}

/**
 * The policy that applies, verified: null when none is configured (no trusted key and no
 * policy file). Every other case either verifies or refuses — a file without a key to check
 * it, a key without a file, no signature, a signature that does not match, an expired policy.
 */
export function loadVerifiedPolicy(home: string, repoRoot: string, now = new Date()): Policy | null {
  const file = path.join(repoRoot, POLICY_FILE);
  const { publicKey } = keyPaths(home);
  const hasFile = fs.existsSync(file);
  const hasKey = fs.existsSync(publicKey);
  if (!hasFile && !hasKey) return null;
  if (!hasKey) {
    throw refuse(
      `${file} exists but no trusted key is installed to verify it (${publicKey})`,
      "Install the signer's public key there, or run `warren policy keygen` and sign the policy.",
    );
  }
  if (!hasFile)
    throw refuse(
      `a trusted policy key is installed (${publicKey}) but there is no ${POLICY_FILE}`,
      'Write the policy, sign it (`warren policy sign`), and commit both files.',
    );
  return verifyPolicyFile(home, file, now);
}

export function verifyPolicyFile(home: string, file: string, now = new Date()): Policy {
  const bytes = readOrRefuse(file, 'policy');
  let sigText: string;
  try {
    sigText = fs.readFileSync(`${file}.sig`, 'utf8').trim();
  } catch {
    throw refuse(`${file} is not signed (no ${path.basename(file)}.sig)`, 'Sign it with `warren policy sign`.');
  }
  let key: KeyObject;
  try {
    key = createPublicKey(fs.readFileSync(keyPaths(home).publicKey));
  } catch (err) {
    throw refuse(
      `the trusted key ${keyPaths(home).publicKey} cannot be read (${(err as Error).message})`,
      'Run `warren policy keygen`.',
    );
  }
  const signature = Buffer.from(sigText, 'base64');
  if (signature.length !== 64 || !verify(null, bytes, key, signature)) {
    throw refuse(
      `${file} does not match its signature: it was changed after signing, or signed by another key`,
      'Review the change and sign it again with `warren policy sign`.',
    );
  }
  const policy = parsePolicy(bytes, file);
  if (Date.parse(policy.expires) <= now.getTime()) {
    throw refuse(`${file} expired at ${policy.expires}`, 'Renew it: set a later `expires` and sign it again.');
  }
  return policy;
}

/** Refuses a run the policy does not allow. Pure. */
export function checkPolicy(policy: Policy, taskId: string, profile: SandboxProfile): void {
  const rule = policy.rules.find((r) => picomatch.isMatch(taskId, r.tasks, { dot: true }));
  if (!rule)
    throw refuse(
      `no rule of the policy covers task ${taskId}`,
      `Add a rule whose \`tasks\` pattern matches ${taskId}, and sign it again.`,
    );
  if (!rule.sandbox.includes(profile.kind)) {
    throw refuse(
      `the policy lets task ${taskId} run only with sandbox ${rule.sandbox.join(' or ')}, not ${profile.kind}`,
      `Create the task with \`--sandbox ${rule.sandbox[0]}\` or set sandbox: in warren.yaml.`,
    );
  }
  if (profile.kind !== 'none' && profile.network && !rule.network) {
    throw refuse(
      `the policy gives task ${taskId} no network, but warren.yaml asks for it (network: true)`,
      'Set `network: false`, or allow it in the policy and sign it again.',
    );
  }
}

function parsePolicy(bytes: Buffer, file: string): Policy {
  const doc = parseDocument(bytes.toString('utf8'), { uniqueKeys: true });
  const parsed = doc.errors.length > 0 ? null : policySchema.safeParse(doc.toJS());
  if (!parsed?.success) {
    const why = parsed
      ? parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'}: ${i.message}`).join('; ')
      : 'not valid YAML';
    throw refuse(
      `${file} is not a valid policy (${why})`,
      'The policy format is in `warren help execution` ("Signed policy").',
    );
  }
  return parsed.data;
}

function readOrRefuse(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch {
    throw new WarrenError('POLICY_INVALID', `cannot read the ${what} file ${file}; nothing was run.`);
  }
}

function refuse(what: string, hint: string): WarrenError {
  return new WarrenError('POLICY_INVALID', `${what}; nothing was run.`, { hint });
}
