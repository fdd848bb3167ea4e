import { migrateToLatest } from '../migrate.js';
import { type CommandGroup, command } from './command-types.js';

/** `migrate`: the database schema. */
export const migrateCommands: CommandGroup = {
  migrate: command({
    flags: {},
    required: [],
    synopsis: 'migrate',
    async run(ctx) {
      const applied = await migrateToLatest(ctx.db());
      return {
        json: { applied },
        text: applied.length
          ? `Applied migrations: ${applied.join(', ')}`
          : 'Database schema is up to date: no migration to apply',
      };
    },
  }),
};
