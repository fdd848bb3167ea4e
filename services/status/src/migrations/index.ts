import type { Migration } from 'kysely';
import * as m0001 from './0001_status.js';
import * as m0002 from './0002_inbox.js';
import * as m0003 from './0003_webhooks.js';
import * as m0004 from './0004_webhook_lease_owner.js';
import * as m0005 from './0005_push.js';
import * as m0006 from './0006_push_native.js';
import * as m0007 from './0007_topics.js';
import * as m0008 from './0008_topic_fanouts_account.js';
import * as m0009 from './0009_key_refusals.js';
import * as m0010 from './0010_inbox_topic.js';

/** Every migration, imported statically so sources and a build share one list. */
export const migrations: Record<string, Migration> = {
  '0001_status': m0001,
  '0002_inbox': m0002,
  '0003_webhooks': m0003,
  '0004_webhook_lease_owner': m0004,
  '0005_push': m0005,
  '0006_push_native': m0006,
  '0007_topics': m0007,
  '0008_topic_fanouts_account': m0008,
  '0009_key_refusals': m0009,
  '0010_inbox_topic': m0010,
};
