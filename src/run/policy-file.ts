/** The signed run policy at the repository root (its signature is FILE.sig). */
export const POLICY_FILE = 'warren.policy.yaml';
