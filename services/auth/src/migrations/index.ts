import type { Migration } from 'kysely';
import * as m0001 from './0001_init.js';
import * as m0002 from './0002_plans.js';
import * as m0003 from './0003_account_api.js';
import * as m0004 from './0004_dashboard.js';
import * as m0005 from './0005_billing.js';
import * as m0006 from './0006_dashboard_keys.js';
import * as m0007 from './0007_key_tokens.js';
import * as m0008 from './0008_nats_users.js';
import * as m0009 from './0009_key_inbox.js';
import * as m0010 from './0010_key_unsigned_recipients.js';
import * as m0011 from './0011_key_webhook_payload.js';
import * as m0012 from './0012_key_push.js';
import * as m0013 from './0013_pusher_apps.js';
import * as m0014 from './0014_key_names.js';

/**
 * Every migration, imported statically rather than read from a folder at run time, so the same
 * list works from the TypeScript sources and from a build. Names sort in the order they run.
 */
export const migrations: Record<string, Migration> = {
  '0001_init': m0001,
  '0002_plans': m0002,
  '0003_account_api': m0003,
  '0004_dashboard': m0004,
  '0005_billing': m0005,
  '0006_dashboard_keys': m0006,
  '0007_key_tokens': m0007,
  '0008_nats_users': m0008,
  '0009_key_inbox': m0009,
  '0010_key_unsigned_recipients': m0010,
  '0011_key_webhook_payload': m0011,
  '0012_key_push': m0012,
  '0013_pusher_apps': m0013,
  '0014_key_names': m0014,
};
