// The release step's audit gate (docs/security.md, "Dependency audit"): reads `npm audit --json`
// on stdin and exits 1 on every high or critical advisory whose GHSA id is not accepted in
// docs/security-exceptions.md, 2 when the report says the audit itself could not run.
//   npm audit --omit=dev --json | npm run -s audit-check
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Advisory {
  url?: string;
  severity?: string;
  title?: string;
  name?: string;
  range?: string;
}
export interface AuditReport {
  /** What npm prints when the advisory endpoint refused (405 from these machines). */
  message?: string;
  error?: { code?: string; summary?: string };
  vulnerabilities?: Record<string, { via?: Array<string | Advisory> }>;
}

/** The GHSA ids a text names (the exceptions file). */
export function acceptedIds(text: string): Set<string> {
  return new Set(text.match(/GHSA-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}/g) ?? []);
}

/** High and critical advisories of the report not accepted, one per advisory; throws when the audit did not run. */
export function unacceptedAdvisories(report: AuditReport, accepted: Set<string>): Advisory[] {
  if (report.error || !report.vulnerabilities) {
    throw new Error(
      `the audit did not run (${report.message || report.error?.summary || report.error?.code || 'not an npm audit --json report'}): run it where the registry's advisory endpoint answers`,
    );
  }
  const seen = new Map<string, Advisory>();
  for (const v of Object.values(report.vulnerabilities)) {
    for (const a of v.via ?? []) {
      if (typeof a !== 'object' || !['high', 'critical'].includes(a.severity ?? '')) continue;
      const id = (a.url ?? '').split('/').pop() ?? '';
      if (!accepted.has(id)) seen.set(a.url ?? `${a.name}@${a.range}`, a);
    }
  }
  return [...seen.values()];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const accepted = acceptedIds(readFileSync(join(root, 'docs', 'security-exceptions.md'), 'utf8'));
  try {
    const bad = unacceptedAdvisories(JSON.parse(readFileSync(0, 'utf8')) as AuditReport, accepted);
    for (const a of bad) console.error(`${a.severity}: ${a.name} ${a.range} ${a.title} (${a.url})`);
    console.log(`audit-check: ${bad.length} high or critical advisory(ies) not accepted`);
    process.exit(bad.length ? 1 : 0);
  } catch (err) {
    console.error(`audit-check: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
}
