import { type Kysely, type MigrationResult, Migrator } from 'kysely';
import { migrations } from './migrations/index.js';

/**
 * The auth service's own migration bookkeeping tables, so other services can keep theirs in the
 * same database without mixing histories.
 */
export const MIGRATION_TABLE = 'auth_migration';
export const MIGRATION_LOCK_TABLE = 'auth_migration_lock';

export function createMigrator<DB>(db: Kysely<DB>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
  });
}

/**
 * Applies every pending migration and returns the names applied (empty when up to date). Kysely
 * takes a database lock first, so instances starting together apply each migration once. Throws
 * the first failure.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>): Promise<string[]> {
  const { error, results = [] } = await createMigrator(db).migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName;
    const message = failed ? `migration ${failed} failed: ${describe(error)}` : describe(error);
    throw new Error(message, { cause: error });
  }
  return results.filter((r: MigrationResult) => r.status === 'Success').map((r) => r.migrationName);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
