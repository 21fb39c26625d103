import { CONFIG_FILE, parseConfig } from '../config/load.js';
import { fileAt } from '../git/trees.js';
import type { ProjectContext } from '../workspace/context.js';
import { compilePolicy, type ProtectedPolicy } from '../config/protected.js';

/**
 * The protected-path policy a land obeys: the globs of warren.yaml as committed on the base
 * (a task cannot unprotect a file by editing its own warren.yaml) together with the main
 * checkout's warren.yaml (already validated when the project was opened). Any invalid source
 * refuses the land before anything moves.
 */
export async function landingPolicy(ctx: ProjectContext, base: string, baseTip: string): Promise<ProtectedPolicy> {
  const globs = new Set(ctx.config.protected);
  const committed = await fileAt(ctx.repo, baseTip, CONFIG_FILE);
  if (committed !== null) {
    for (const glob of (await parseConfig(committed, `${CONFIG_FILE} on ${base}`)).protected) globs.add(glob);
  }
  return compilePolicy([...globs], `${CONFIG_FILE} (${base} and the main checkout)`);
}
