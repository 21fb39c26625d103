/**
 * Where warren's own helper programs are, for a container task's runs. Kept at src/run's depth:
 * src/run and dist/bundle both sit two folders below the package, so the same relative URL
 * resolves from the compiled file and from the bundle.
 */

/** dist/bundle/container-exec.js (src/cli/container-exec.ts): the exec client the runner supervises on the host. */
export function containerExecScript(): string {
  return new URL('../../dist/bundle/container-exec.js', import.meta.url).pathname;
}

/** bin/container-init.mjs: what each command runs under inside the container. */
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
