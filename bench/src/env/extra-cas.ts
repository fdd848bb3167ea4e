import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One file for NODE_EXTRA_CA_CERTS (which names one) holding every CA the status service is to
 * trust beside Node's default (figure 7's webhook receiver, figure 8's push service): undefined
 * for none, the file itself for one, their PEMs joined into a new file for more.
 */
export function extraCaFile(files: readonly string[]): string | undefined {
  if (files.length <= 1) return files[0];
  const out = join(mkdtempSync(join(tmpdir(), 'bench-cas-')), 'extra-cas.pem');
  writeFileSync(out, `${files.map((f) => readFileSync(f, 'utf8').trimEnd()).join('\n')}\n`);
  return out;
}
