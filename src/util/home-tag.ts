import { createHash } from 'node:crypto';

/**
 * Eight hex characters standing for a WARREN_HOME, put in the names of what its processes make
 * in the shared temporary folder, so that `gc` of a home collects its own leftovers and never
 * another home's (egress proxies, throwaway indexes).
 */
export function homeTag(home: string): string {
  return createHash('sha256').update(home).digest('hex').slice(0, 8);
}
