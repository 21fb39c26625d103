/**
 * Names warren.yaml and config.yaml give things, as patterns: kept apart from the schema (zod)
 * so that a command checking a name does not load the validator.
 */

/** A host's name in `hosts:` and in `--runner ssh:NAME`. */
export const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
