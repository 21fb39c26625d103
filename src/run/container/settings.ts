import type { WarrenConfig } from '../../config/schema.js';

/** What warren.yaml's `sandbox: { kind: container, … }` sets for a task's container, with its defaults. */
export interface ContainerSettings {
  /** A local image; none: warren's own, built from the host's files (podman.ts BASE_IMAGE). */
  image: string | null;
  /** podman's `--memory` (e.g. 4g). Ignored by rootless podman on cgroups v1, which says so. */
  memory: string;
  cpus: number;
  pids: number;
}

const CONTAINER_DEFAULTS = { memory: '4g', cpus: 2, pids: 4096 } as const;

export function containerSettingsOf(config: WarrenConfig): ContainerSettings {
  const s = typeof config.sandbox === 'object' && config.sandbox.kind === 'container' ? config.sandbox : null;
  return {
    image: s?.image ?? null,
    memory: s?.memory ?? CONTAINER_DEFAULTS.memory,
    cpus: s?.cpus ?? CONTAINER_DEFAULTS.cpus,
    pids: s?.pids ?? CONTAINER_DEFAULTS.pids,
  };
}
