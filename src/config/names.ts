/**
 * Names warren.yaml and config.yaml give things, as patterns: kept apart from the schema (zod)
 * so that a command checking a name does not load the validator.
 */

/** A host's name in `hosts:` and in `ssh:NAME` (warren.yaml's `runner:`, `new --runner`). */
export const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** A cluster's name in `clusters:` and in `k8s:NAME` (a DNS label). */
export const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/;
