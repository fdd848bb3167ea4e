import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileAsync } from './exec.js';

export interface TestCerts {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA's PEM, to trust in test clients. */
  ca: string;
}

/** A throwaway CA and a localhost/127.0.0.1 certificate it signs, made with openssl. */
export async function makeCerts(): Promise<TestCerts> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-tls-'));
  const f = (n: string) => join(dir, n);
  const ssl = (args: string[]) => execFileAsync('openssl', args);
  await ssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=Herald Test CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  ]);
  await ssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    f('tls.key'),
    '-out',
    f('tls.csr'),
  ]);
  writeFileSync(
    f('ext.cnf'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  await ssl([
    'x509',
    '-req',
    '-in',
    f('tls.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    f('ext.cnf'),
    '-out',
    f('tls.crt'),
  ]);
  return {
    dir,
    caFile: f('ca.crt'),
    certFile: f('tls.crt'),
    keyFile: f('tls.key'),
    ca: readFileSync(f('ca.crt'), 'utf8'),
  };
}
