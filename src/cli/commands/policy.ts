import path from 'node:path';
import { POLICY_FILE } from '../../trust/policy-file.js';
import type { Register } from '../command.js';

/** The policy's YAML and schema parsers load only for this command (and for runs that need them). */
const policyModule = () => import('../../run/policy.js');

export const registerPolicy: Register = (program, run) => {
  const policy = program.command('policy').description('the signed run policy: keygen | sign FILE | verify [FILE]');
  policy
    .command('keygen')
    .description('make an Ed25519 key pair in $WARREN_HOME/policy (the public half is the trusted key)')
    .option('--force', 'replace an existing key')
    .action((opts: { force?: boolean }) =>
      run(async (env) => {
        const { keygen } = await policyModule();
        const paths = keygen(env.store().home, opts.force === true);
        return { data: paths, human: `private key ${paths.privateKey}\ntrusted public key ${paths.publicKey}` };
      }),
    );
  policy
    .command('sign')
    .description('sign a policy file; writes FILE.sig')
    .argument('<file>')
    .action((file: string) =>
      run(async (env) => {
        const { signPolicy } = await policyModule();
        const result = signPolicy(env.store().home, path.resolve(env.repoDir, file));
        return {
          data: { signature: result.signature, expires: result.policy.expires },
          human: `signed: ${result.signature} (expires ${result.policy.expires})`,
        };
      }),
    );
  policy
    .command('verify')
    .description(`verify a policy file against the trusted key (default: ${POLICY_FILE} at the repository root)`)
    .argument('[file]')
    .action((file: string | undefined) =>
      run(async (env) => {
        const target = file ? path.resolve(env.repoDir, file) : path.join((await env.project()).repo.root, POLICY_FILE);
        const { verifyPolicyFile } = await policyModule();
        const verified = verifyPolicyFile(env.store().home, target);
        return {
          data: { valid: true, file: target, expires: verified.expires, rules: verified.rules },
          human: `valid: ${target} (expires ${verified.expires}, ${verified.rules.length} rule(s))`,
        };
      }),
    );
  // Nested commands need the same no-exit, one-output handling main.ts gives the top level.
  policy.commands.forEach((cmd) => cmd.exitOverride().configureOutput(program.configureOutput()));
};
