import { type Kysely, type Migration, type MigrationResult, Migrator } from 'kysely';

/** One service's migrations and the bookkeeping tables that keep its history apart from others'. */
export interface MigrationSet {
  migrations: Record<string, Migration>;
  /** Kysely's migration table for this service (e.g. `auth_migration`). */
  table: string;
  /** Kysely's lock table for this service (e.g. `auth_migration_lock`). */
  lockTable: string;
}

export function createMigrator<DB>(db: Kysely<DB>, set: MigrationSet): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => set.migrations },
    migrationTableName: set.table,
    migrationLockTableName: set.lockTable,
  });
}

/**
 * Applies every pending migration and returns the names applied (empty when up to date). Kysely
 * takes a database lock first, so instances starting together apply each migration once. Throws
 * the first failure.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, set: MigrationSet): Promise<string[]> {
  const { error, results = [] } = await createMigrator(db, set).migrateToLatest();
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

/** One service's migrations bound to its own bookkeeping tables (`<service>_migration[_lock]`). */
export interface ServiceMigrations extends MigrationSet {
  createMigrator<DB>(db: Kysely<DB>): Migrator;
  /** See {@link migrateToLatest}. */
  migrateToLatest<DB>(db: Kysely<DB>): Promise<string[]>;
}

/**
 * A service's migration set. Each service keeps its own bookkeeping tables, so several services
 * can share one database without mixing histories.
 */
export function serviceMigrations(
  service: string,
  migrations: Record<string, Migration>,
): ServiceMigrations {
  const set: MigrationSet = {
    migrations,
    table: `${service}_migration`,
    lockTable: `${service}_migration_lock`,
  };
  return {
    ...set,
    createMigrator: (db) => createMigrator(db, set),
    migrateToLatest: (db) => migrateToLatest(db, set),
  };
}
