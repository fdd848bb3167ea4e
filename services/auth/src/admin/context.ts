import {
  CommonEnv,
  connectNats,
  createDb,
  createLogger,
  SecretBox,
  SecretEncryptionKey,
} from '@herald/kit';
import type { PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import { DatabaseUrl, MaxLiveKeys, SecretOverlapMs } from '../config.js';
import type { AuthDb } from '../db-schema.js';
import type { KeyRules } from '../keys/issuing.js';
import { loadPlanCatalogue, resolvePlansFile } from '../plan-catalogue.js';
import { MaxPusherApps } from '../pusher/config.js';
import type { AdminSettings } from './settings.js';

/**
 * One command's connections and configuration, opened on first use (only commands that
 * broadcast need NATS, only plan-aware ones the catalogue) and closed after.
 */
export class AdminContext {
  readonly #settings: AdminSettings;
  #db: Kysely<AuthDb> | undefined;
  #nc: NatsConnection | undefined;
  #catalogue: PlanCatalogue | undefined;

  constructor(settings: AdminSettings) {
    this.#settings = settings;
  }

  /** The environment the command runs with (process variables over .data/dev.env). */
  get env(): Record<string, string | undefined> {
    return this.#settings.env;
  }

  db(): Kysely<AuthDb> {
    if (!this.#db) {
      const url = DatabaseUrl.safeParse(this.#settings.env.DATABASE_URL);
      if (!url.success) throw new Error(`DATABASE_URL ${this.#missing('DATABASE_URL', url.error)}`);
      // One command runs one query at a time.
      this.#db = createDb<AuthDb>(url.data, 2);
    }
    return this.#db;
  }

  /** The plan catalogue, from PLANS_FILE (environment, then dev.env) or config/plans.json. */
  catalogue(): PlanCatalogue {
    this.#catalogue ??= loadPlanCatalogue(resolvePlansFile(this.#settings.env.PLANS_FILE));
    return this.#catalogue;
  }

  /** The rules `key create` applies: the same as the account API's. */
  keyRules(): KeyRules {
    const max = MaxLiveKeys.safeParse(this.#settings.env.MAX_LIVE_KEYS_PER_ACCOUNT);
    if (!max.success) {
      throw new Error(`MAX_LIVE_KEYS_PER_ACCOUNT ${max.error.issues[0]?.message ?? 'is invalid'}`);
    }
    return { db: this.db(), catalogue: this.catalogue(), maxLiveKeys: max.data, box: this.box() };
  }

  /**
   * The box sealing signing secrets, from SECRET_ENCRYPTION_KEY; undefined when unset (a key that
   * requires tokens is then refused, naming the variable). A value set but malformed is an error.
   */
  box(): SecretBox | undefined {
    const raw = this.#settings.env.SECRET_ENCRYPTION_KEY;
    if (raw === undefined || raw === '') return undefined;
    const key = SecretEncryptionKey.safeParse(raw);
    if (!key.success) {
      throw new Error(`SECRET_ENCRYPTION_KEY ${key.error.issues[0]?.message ?? 'is invalid'}`);
    }
    return new SecretBox(key.data);
  }

  /** TOKEN_SECRET_OVERLAP_MS, as auth reads it. */
  secretOverlapMs(): number {
    const overlap = SecretOverlapMs.safeParse(this.#settings.env.TOKEN_SECRET_OVERLAP_MS);
    if (!overlap.success) {
      throw new Error(
        `TOKEN_SECRET_OVERLAP_MS ${overlap.error.issues[0]?.message ?? 'is invalid'}`,
      );
    }
    return overlap.data;
  }

  /** MAX_PUSHER_APPS_PER_ACCOUNT, as auth reads it. */
  maxPusherApps(): number {
    const max = MaxPusherApps.safeParse(this.#settings.env.MAX_PUSHER_APPS_PER_ACCOUNT);
    if (!max.success) {
      throw new Error(
        `MAX_PUSHER_APPS_PER_ACCOUNT ${max.error.issues[0]?.message ?? 'is invalid'}`,
      );
    }
    return max.data;
  }

  async nats(): Promise<NatsConnection> {
    if (!this.#nc) {
      const config = CommonEnv.safeParse(this.#settings.env);
      if (!config.success)
        throw new Error(`NATS settings are invalid: ${config.error.issues[0]?.message}`);
      // Silent: the CLI's stdout carries exactly its answer.
      this.#nc = await connectNats(config.data, 'herald-admin', createLogger('admin', 'silent'));
    }
    return this.#nc;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#db?.destroy(), this.#nc?.close()]);
  }

  #missing(name: string, error: { issues: { message: string }[] }): string {
    const value = this.#settings.env[name];
    if (value !== undefined && value !== '') {
      return `${error.issues[0]?.message ?? 'is invalid'}`;
    }
    const where = this.#settings.devEnvPath ?? '.data/dev.env';
    return `is not set, and ${where} ${this.#settings.devEnvFile ? 'does not define it' : 'does not exist'}: start the dev stack with \`make dev\`, or set ${name}=postgres://user:pass@host:5432/herald`;
  }
}
