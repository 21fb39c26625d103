import type { ProvisionMode } from '../config/schema.js';
import { payload, type PayloadsOf } from '../state/events.js';
import type { OutsideLink, ProvisionRecord, ProvisionSkip, StrippedEntry } from './types.js';

/** Provisioning's events. */
export const PROVISION_EVENTS = {
  'provision.path': payload<ProvisionRecord>(),
  'provision.skip': payload<ProvisionSkip>(),
  /** A provisioned node_modules at a workspace's root: its packages' node_modules were provisioned too. */
  'provision.workspace': payload<{ root: string; file: string; packages: number; added: string[] }>(),
  'provision.excluded': payload<{ paths: string[] }>(),
  'provision.namespaced': payload<{ paths: string[] }>(),
  'provision.snapshot': payload<{ path: string; snapshot: string; entries: number; bytes: number; ms: number }>(),
  'provision.fill': payload<{
    path: string;
    linked: number;
    filled: number;
    failed: { path: string; error: string }[];
  }>(),
  'provision.fallback': payload<{ path: string; requested: 'cow'; used: string; reason: string }>(),
  'provision.refresh': payload<{ paths: string[] }>(),
  'provision.unmounted': payload<{ path: string }>(),
  'provision.unmount_failed': payload<{ path: string }>(),
  'provision.remount': payload<{ path: string }>(),
  /** A cow path's mount point holds something else (a plain folder, a file, a link): the layer is not mounted over it. */
  'provision.replaced': payload<{ path: string; by: 'folder' | 'file' | 'link'; entries: number }>(),
  'provision.relocated': payload<{ path: string; from: string; to: string; files: string[] }>(),
  'provision.not_isolated': payload<{ path: string; left: { path: string; why: string }[] }>(),
  'provision.outside_links': payload<{ path: string; links: OutsideLink[] }>(),
  'provision.stripped': payload<{ path: string; entries: StrippedEntry[] }>(),
  /** Ignored paths the project's tooling reads, in the main checkout and provisioned by nothing: said once per repository (hint.ts). */
  'provision.hint': payload<{ paths: { path: string; mode: ProvisionMode }[]; lines: string[] }>(),
  /** The main checkout's install did not match its lockfile: no snapshot under that key; what the workspace got instead. */
  'provision.install_stale': payload<{ path: string; lockfile: string | null; why: string; used: string }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof PROVISION_EVENTS> {}
}
