import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { type Plan, PlanCatalogue } from '@herald/proto';
import type { z } from 'zod';
import { repoRoot } from './repo-root.js';

/** Where the catalogue is when PLANS_FILE is unset, relative to the repo root. */
export const DEFAULT_PLANS_FILE = 'config/plans.json';

/** The catalogue file could not be read or is invalid; the message names the file and field. */
export class PlanCatalogueError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PlanCatalogueError';
  }
}

/**
 * The catalogue's path: PLANS_FILE when set (relative to the working directory), else
 * config/plans.json at the repo root (found from this file's location, so the service and the
 * CLI agree wherever they are started from), else config/plans.json in the working directory.
 */
export function resolvePlansFile(plansFile: string | undefined, cwd = process.cwd()): string {
  if (plansFile !== undefined && plansFile !== '') {
    return isAbsolute(plansFile) ? plansFile : resolve(cwd, plansFile);
  }
  const root = repoRoot();
  return root === undefined ? resolve(cwd, DEFAULT_PLANS_FILE) : join(root, DEFAULT_PLANS_FILE);
}

/**
 * Reads and validates the plan catalogue. Throws a {@link PlanCatalogueError} naming the file
 * and, for a bad catalogue, every bad field (`plans[1].limits.connections: must be ...`).
 */
export function loadPlanCatalogue(file: string): PlanCatalogue {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new PlanCatalogueError(
      `plan catalogue ${file} cannot be read (${typeof code === 'string' ? code : String(err)}): set PLANS_FILE to the catalogue's path, or restore ${DEFAULT_PLANS_FILE}`,
      { cause: err },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new PlanCatalogueError(
      `plan catalogue ${file} is not valid JSON (${err instanceof Error ? err.message : String(err)}): fix the syntax`,
      { cause: err },
    );
  }
  return parsePlanCatalogue(json, file);
}

/** Validates an already-parsed catalogue; `source` names it in errors. */
export function parsePlanCatalogue(json: unknown, source: string): PlanCatalogue {
  const parsed = PlanCatalogue.safeParse(json);
  if (parsed.success) return parsed.data;
  throw new PlanCatalogueError(
    `plan catalogue ${source} is invalid: ${parsed.error.issues.map(describeIssue).join('; ')}`,
  );
}

/** The plan with this id, or undefined. */
export function findPlan(catalogue: PlanCatalogue, id: string): Plan | undefined {
  return catalogue.plans.find((p) => p.id === id);
}

/** `free, hobby, startup`: for messages that list the valid ids. */
export function planIds(catalogue: PlanCatalogue): string {
  return catalogue.plans.map((p) => p.id).join(', ');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${fieldPath(issue.path)}: ${issue.message}`;
}

/** `plans[1].limits.connections`, or `(catalogue)` for the whole document. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    out += typeof part === 'number' ? `[${part}]` : `${out === '' ? '' : '.'}${String(part)}`;
  }
  return out === '' ? '(catalogue)' : out;
}
