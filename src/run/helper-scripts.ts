/**
 * Where warren's own helper programs are, for a container task's runs. Kept at src/run's depth:
 * src/run and dist/bundle both sit two folders below the package, so the same relative URL
 * resolves from the compiled file and from the bundle.
 */

/** bin/container-init.pl: what each command of a container task runs under inside its container. */
export function containerInitPerlScript(): string {
  return new URL('../../bin/container-init.pl', import.meta.url).pathname;
}

/** bin/container-init.mjs: the same, with node, for a task in a cluster (its pod's image may have no perl). */
export function containerInitScript(): string {
  return new URL('../../bin/container-init.mjs', import.meta.url).pathname;
}

/** dist/bundle/k8s-exec.js (src/cli/k8s-exec.ts): the exec client the runner supervises for a task in a cluster. */
export function k8sExecScript(): string {
  return new URL('../../dist/bundle/k8s-exec.js', import.meta.url).pathname;
}

/** One of warren's shipped Kubernetes manifests (k8s/NAME). */
export function k8sManifest(file: string): string {
  return new URL(`../../k8s/${file}`, import.meta.url).pathname;
}
