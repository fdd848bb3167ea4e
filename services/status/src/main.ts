import { runService } from '@herald/kit';
import type { Kysely } from 'kysely';
import { loadConfig } from './config.js';
import type { StatusDb } from './db-schema.js';
import { migrateToLatest } from './migrate.js';
import { createStatusService } from './service.js';

runService({
  name: 'status',
  loadConfig,
  migrate: (db: Kysely<StatusDb>) => migrateToLatest(db),
  create: createStatusService,
});
