import { parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { WarrenError } from '../errors.js';
import { isValidBranchName } from '../git/refname.js';
import { configSchema, type WarrenConfig } from './schema.js';
import { userConfigSchema, type UserConfig } from './user-schema.js';

const MAX_ALIAS_COUNT = 100;

/** Parses and validates warren.yaml text: YAML and zod, loaded only when a file must be checked. */
export function parseConfig(text: string, file = 'warren.yaml'): WarrenConfig {
  const config = validate(text, file, configSchema);
  const unknownGates = (config.land?.gate ?? []).filter((g) => !config.verify.some((v) => v.id === g));
  if (unknownGates.length > 0) {
    throw new WarrenError(
      'CONFIG_INVALID',
      `${file} is invalid: land.gate names ${unknownGates.map((g) => `"${g}"`).join(', ')}, which no verify command has as its id. Nothing was changed.`,
      {
        hint: `Use ids from verify: (${config.verify.map((v) => v.id).join(', ') || 'none'}), or add the command there.`,
        details: { problems: unknownGates.map((g) => `land.gate: unknown verify id "${g}"`) },
      },
    );
  }
  const badTypes = typeProblems(config.types ?? []);
  if (badTypes.length > 0) {
    throw new WarrenError('CONFIG_INVALID', `${file} is invalid: ${badTypes.join('; ')}. Nothing was changed.`, {
      hint: 'Each type becomes the first part of branch names (TYPE/ID): use plain words such as feat, fix, spike.',
      details: { problems: badTypes },
    });
  }
  return config;
}

/** Pure: what is wrong with a `types:` list beyond its shape (duplicates, names git refuses in a branch). */
export function typeProblems(types: readonly string[]): string[] {
  const problems: string[] = [];
  types.forEach((type, i) => {
    if (types.indexOf(type) !== i) problems.push(`types[${i}]: "${type}" is listed twice`);
    else if (!isValidBranchName(`${type}/x`))
      problems.push(
        `types[${i}]: "${type}" would make branch names git refuses (git check-ref-format --branch "${type}/ID")`,
      );
  });
  return problems;
}

/** `$WARREN_HOME/config.yaml`, the user's own settings. */
export function parseUserConfig(text: string, file: string): UserConfig {
  return validate(text, file, userConfigSchema);
}

function validate<T>(text: string, file: string, schema: z.ZodType<T>): T {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    throw new WarrenError(
      'CONFIG_INVALID',
      `${file} is not valid YAML: ${first?.message ?? 'parse error'}; nothing was changed.`,
      {
        hint: `Fix ${file} and run the command again.`,
      },
    );
  }
  const raw = toPlain(doc, file);
  const result = schema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map(describeIssue);
    throw new WarrenError('CONFIG_INVALID', `${file} is invalid: ${problems.join('; ')}. Nothing was changed.`, {
      hint: `Fix ${file}; \`warren help configuration\` lists the keys it takes.`,
      details: { problems },
    });
  }
  return result.data;
}

/**
 * The document as plain data. yaml refuses to expand more than 100 aliases (an alias bomb: a
 * few lines that would expand to billions of nodes) by throwing; that is bad configuration, not
 * a bug, and is reported as such.
 */
function toPlain(doc: Document, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? {};
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new WarrenError(
      'CONFIG_INVALID',
      `${file} could not be read as data: ${why} (warren expands at most ${MAX_ALIAS_COUNT} YAML aliases); nothing was changed.`,
      {
        hint: `Fix ${file}: write the values out instead of nesting aliases.`,
      },
    );
  }
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length === 0 ? '(top level)' : formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `unknown key "${where === '(top level)' ? key : `${where}.${key}`}"`).join('; ');
  }
  return `${where}: ${issue.message}`;
}

function formatPath(parts: readonly PropertyKey[]): string {
  return parts.reduce<string>(
    (acc, part) =>
      typeof part === 'number' ? `${acc}[${part}]` : acc === '' ? String(part) : `${acc}.${String(part)}`,
    '',
  );
}
