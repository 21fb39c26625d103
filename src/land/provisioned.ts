/** warren's own paths inside a workspace: the core knows them (src/workspace/provisioned.ts); landing reads them from there. */
export { excludePathspecs, isProvisioned, provisionedExcludes, provisionedPaths } from '../workspace/provisioned.js';
