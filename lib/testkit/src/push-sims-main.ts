/**
 * The FCM and APNs simulators as a process (scripts/dev.sh runs it when no real push credentials
 * are configured):
 *   FCM_SIM_PORT (default 8451), APNS_SIM_PORT (8452), PUSH_SIM_HOST (127.0.0.1),
 *   APNS_SIM_TLS_CERT_FILE and APNS_SIM_TLS_KEY_FILE (required: APNs is HTTP/2 over TLS),
 *   PUSH_SIM_DIR (required): where the simulators' credentials are kept, made on the first run
 *   and trusted on every later one: fcm-service-account.json (for `push configure
 *   --fcm-service-account`), apns-key.p8 and apns-key.json (its key id and team id).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ApnsSimulator, type SimApnsKey } from './apns-simulator.js';
import { FcmSimulator, type SimServiceAccount } from './fcm-simulator.js';

const Env = z.object({
  FCM_SIM_PORT: z.coerce.number().int().min(0).max(65535).default(8451),
  APNS_SIM_PORT: z.coerce.number().int().min(0).max(65535).default(8452),
  PUSH_SIM_HOST: z.string().default('127.0.0.1'),
  APNS_SIM_TLS_CERT_FILE: z.string().min(1),
  APNS_SIM_TLS_KEY_FILE: z.string().min(1),
  PUSH_SIM_DIR: z.string().min(1),
});

async function main(): Promise<void> {
  const parsed = Env.safeParse(process.env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`push-sims: bad environment: ${issues.join('; ')}`);
  }
  const env = parsed.data;
  const host = env.PUSH_SIM_HOST;
  const fcm = await FcmSimulator.start({ port: env.FCM_SIM_PORT, host });
  const apns = await ApnsSimulator.start({
    port: env.APNS_SIM_PORT,
    host,
    tls: {
      cert: readFileSync(env.APNS_SIM_TLS_CERT_FILE, 'utf8'),
      key: readFileSync(env.APNS_SIM_TLS_KEY_FILE, 'utf8'),
    },
  });
  mkdirSync(env.PUSH_SIM_DIR, { recursive: true, mode: 0o700 });
  const saFile = join(env.PUSH_SIM_DIR, 'fcm-service-account.json');
  const p8File = join(env.PUSH_SIM_DIR, 'apns-key.p8');
  const idsFile = join(env.PUSH_SIM_DIR, 'apns-key.json');
  const sa = existsSync(saFile)
    ? fcm.trust(JSON.parse(readFileSync(saFile, 'utf8')) as SimServiceAccount)
    : fcm.serviceAccount('herald-dev');
  writeFileSync(saFile, JSON.stringify(sa, null, 2), { mode: 0o600 });
  const key =
    existsSync(p8File) && existsSync(idsFile)
      ? apns.trust({
          ...(JSON.parse(readFileSync(idsFile, 'utf8')) as Omit<SimApnsKey, 'key_pem'>),
          key_pem: readFileSync(p8File, 'utf8'),
        })
      : apns.key('HERALDDEV1');
  writeFileSync(p8File, key.key_pem, { mode: 0o600 });
  writeFileSync(idsFile, JSON.stringify({ key_id: key.key_id, team_id: key.team_id }));
  process.stdout.write(
    `push-sims: FCM on ${fcm.url} (token URI ${fcm.tokenUri}), APNs on ${apns.url}; credentials in ${env.PUSH_SIM_DIR}\n`,
  );
  // Every push, as it arrives, so a developer sees what a phone would have got.
  const seen = { fcm: 0, apns: 0 };
  setInterval(() => {
    for (const a of fcm.arrivals.slice(seen.fcm))
      process.stdout.write(`fcm ${a.status} ${a.token} ${JSON.stringify(a.message)}\n`);
    for (const a of apns.arrivals.slice(seen.apns))
      process.stdout.write(`apns ${a.status} ${a.token} ${JSON.stringify(a.payload)}\n`);
    seen.fcm = fcm.arrivals.length;
    seen.apns = apns.arrivals.length;
  }, 500).unref();
  const stop = () => {
    Promise.all([fcm.close(), apns.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Keeps running while the servers listen.
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
