import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// What a server on the Docker host needs to be reached from a compose stack's containers (the
// container tests' webhook receiver and push service, the compose soak's): the host's address on
// the stack's `egress` network, and a certificate for it from the receiver CA that
// scripts/lib/stack-test.sh made before the stack started (status trusts it).

const execFileAsync = promisify(execFile);

/** The IPv4 gateway of `<project>_egress`: the host as the status containers reach it. */
export async function egressGateway(project: string): Promise<string> {
  const network = `${project}_egress`;
  const res = await execFileAsync('docker', [
    'network',
    'inspect',
    network,
    '--format',
    '{{range .IPAM.Config}}{{.Gateway}} {{end}}',
  ]).catch((err: { stderr?: string; message: string }) => ({
    stdout: '',
    stderr: err.stderr || err.message,
  }));
  const gateway = res.stdout.split(/\s+/).find((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a));
  if (!gateway)
    throw new Error(`no IPv4 gateway for network ${network}: ${res.stderr || res.stdout}`);
  return gateway;
}

/** A key and certificate for `ip`, signed by the CA in HERALD_WEBHOOK_CA_FILE's folder (the push service's too). */
export async function issueCert(ip: string): Promise<{ key: string; cert: string }> {
  const caFile = process.env.HERALD_WEBHOOK_CA_FILE;
  if (!caFile)
    throw new Error(
      'HERALD_WEBHOOK_CA_FILE is not set: the container tests run under scripts/test-deploy.sh or scripts/test-cluster.sh, which make the receiver CA',
    );
  const caKey = join(caFile, '..', 'ca.key');
  const dir = mkdtempSync(join(tmpdir(), 'herald-receiver-'));
  const f = (n: string) => join(dir, n);
  const ssl = (args: string[]) => execFileAsync('openssl', args);
  await ssl(
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
      '-subj',
      `/CN=${ip}`,
      '-keyout',
      f('tls.key'),
      '-out',
      f('tls.csr'),
    ]),
  );
  writeFileSync(f('ext.cnf'), `subjectAltName=IP:${ip}\nextendedKeyUsage=serverAuth\n`);
  await ssl(
    ['x509', '-req', '-in', f('tls.csr'), '-CA', caFile, '-CAkey', caKey]
      .concat(['-CAcreateserial', '-CAserial', f('ca.srl'), '-days', '2'])
      .concat(['-extfile', f('ext.cnf'), '-out', f('tls.crt')]),
  );
  return { key: readFileSync(f('tls.key'), 'utf8'), cert: readFileSync(f('tls.crt'), 'utf8') };
}
