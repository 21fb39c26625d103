import path from 'node:path';
import type { ProjectContext } from '../workspace/context.js';

/** Where warren keeps a task's provisioning state under $WARREN_HOME: layers and manifests. */

/** One folder name per provisioned path; encodeURIComponent leaves no `/`, `,` or `:`. */
export function slugOf(rel: string): string {
  return encodeURIComponent(rel);
}

export function overlaysRoot(home: string): string {
  return path.join(home, 'overlays');
}

export function taskOverlayDir(ctx: ProjectContext, taskId: string): string {
  return path.join(overlaysRoot(ctx.store.home), ctx.key, taskId);
}

export function layerDirs(ctx: ProjectContext, taskId: string, rel: string): { upper: string; work: string } {
  const base = path.join(taskOverlayDir(ctx, taskId), slugOf(rel));
  return { upper: path.join(base, 'upper'), work: path.join(base, 'work') };
}

export function taskManifestDir(ctx: ProjectContext, taskId: string): string {
  return path.join(ctx.store.home, 'provision', ctx.key, taskId);
}

export function manifestFile(ctx: ProjectContext, taskId: string, rel: string): string {
  return path.join(taskManifestDir(ctx, taskId), `${slugOf(rel)}.manifest.json`);
}

/** copy/hardlink: the entries `status` found identical to the main checkout's (status/same-content.ts). */
export function sameCacheFile(ctx: ProjectContext, taskId: string, rel: string): string {
  return path.join(taskManifestDir(ctx, taskId), `${slugOf(rel)}.same.json`);
}
