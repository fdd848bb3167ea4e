import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';

/**
 * A CA file's certificates (WEBHOOK_CA_FILE, PUSH_CA_FILE) beside the system's; unset, Node's
 * default (which already adds NODE_EXTRA_CA_CERTS). Naming `ca` replaces Node's default, so
 * NODE_EXTRA_CA_CERTS is read here too.
 */
export function trustedCas(file: string | undefined): string[] | undefined {
  if (file === undefined) return undefined;
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  return [
    ...rootCertificates,
    readFileSync(file, 'utf8'),
    ...(extra ? [readFileSync(extra, 'utf8')] : []),
  ];
}
