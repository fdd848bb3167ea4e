import { serviceMigrations } from '@herald/kit';
import { migrations } from './migrations/index.js';

/** The status service's migrations, bookkept in `status_migration` and `status_migration_lock`. */
const set = serviceMigrations('status', migrations);

export const MIGRATION_TABLE = set.table;
export const MIGRATION_LOCK_TABLE = set.lockTable;
export const createMigrator = set.createMigrator;
/** Applies every pending migration of this service; returns the names applied. */
export const migrateToLatest = set.migrateToLatest;
