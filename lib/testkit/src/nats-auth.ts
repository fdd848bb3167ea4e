import { randomBytes } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from 'nkeys.js';
import { REPO_ROOT } from './service-process.js';

/** The NATS users the test kit's servers know: deploy/nats/users.conf's, with fresh passwords. */
export const NATS_USERS = [
  'admin',
  'auth',
  'ingress-api',
  'socket-edge',
  'retention',
  'status',
] as const;
export type NatsUser = (typeof NATS_USERS)[number];

export interface NatsCredentials {
  user: string;
  pass: string;
}

export interface NatsAuth {
  /** Each user's name (`herald-<user>`) and password. */
  credentials: Record<NatsUser, NatsCredentials>;
  /** The auth callout's account seed (the auth service signs backend users with it). */
  calloutSeed: string;
  /** The environment nats-server reads users.conf's variables from. */
  serverEnv: Record<string, string>;
}

const envName = (u: NatsUser) => `HERALD_NATS_PASSWORD_${u.toUpperCase().replace(/-/g, '_')}`;

/** Fresh passwords and a callout key for one server. */
export function makeNatsAuth(): NatsAuth {
  const credentials = {} as Record<NatsUser, NatsCredentials>;
  const serverEnv: Record<string, string> = {};
  for (const u of NATS_USERS) {
    // nats-server parses a variable's value as config: a letter first and hex after keep it a
    // string (a leading digit reads as a number, and fails).
    const pass = `hn${randomBytes(18).toString('hex')}`;
    credentials[u] = { user: `herald-${u}`, pass };
    serverEnv[envName(u)] = pass;
  }
  const account = createAccount();
  serverEnv.HERALD_NATS_CALLOUT_ISSUER = account.getPublicKey();
  return {
    credentials,
    calloutSeed: new TextDecoder().decode(account.getSeed()),
    serverEnv,
  };
}

/**
 * Writes the server's config into `dir`: JetStream, and the repo's deploy/nats/users.conf
 * included as is (the users, their permissions, the callout), so the tests run what ships.
 */
export function writeNatsConf(
  dir: string,
  opts: { jetstream: boolean; maxFileStore?: number },
): string {
  copyFileSync(join(REPO_ROOT, 'deploy', 'nats', 'users.conf'), join(dir, 'users.conf'));
  const conf = join(dir, 'nats.conf');
  const limit = opts.maxFileStore === undefined ? '' : `, max_file_store: ${opts.maxFileStore}`;
  const js = opts.jetstream ? `jetstream { store_dir: ${JSON.stringify(dir)}${limit} }\n` : '';
  writeFileSync(conf, `${js}include users.conf\n`);
  return conf;
}
