import { listFact, type FactsOf } from '../state/facts.js';
import type { ProvisionRecord, ProvisionSkip } from './types.js';

/** What provisioning records on a task. */
export const PROVISION_FACTS = {
  /** One record per provisioned path. */
  provision: listFact<ProvisionRecord>(
    (r) => typeof r.path === 'string' && typeof r.mode === 'string' && typeof r.source === 'string',
  ),
  /** What was asked for and skipped, and why. */
  provisionSkips: listFact<ProvisionSkip>((s) => typeof s.path === 'string' && typeof s.reason === 'string'),
};

declare module '../state/facts.js' {
  interface TaskFacts extends FactsOf<typeof PROVISION_FACTS> {}
}
