import { accountCommands } from './account-commands.js';
import { billingCommands } from './billing-commands.js';
import type { CommandGroup, CommandSpec } from './command-types.js';
import { keyCommands } from './key-commands.js';
import { migrateCommands } from './migrate-commands.js';
import { natsUserCommands } from './nats-user-commands.js';
import { pushCommands } from './push-commands.js';
import { pusherCommands } from './pusher-commands.js';
import { tokenCommands } from './token-commands.js';
import { webhookCommands } from './webhook-commands.js';

/**
 * Every command group of the CLI, in --help's order. A wing's commands plug in here, one line per
 * group: its `admin/<wing>-commands.ts` exports a {@link CommandGroup}, each command with its
 * flags, synopsis and run; args.ts derives the flags to parse and the usage from them.
 */
export const COMMAND_GROUPS: readonly CommandGroup[] = [
  migrateCommands,
  accountCommands,
  keyCommands,
  tokenCommands,
  natsUserCommands,
  billingCommands,
  webhookCommands,
  pushCommands,
  pusherCommands,
];

/** The commands by name (`key create`). */
export const COMMANDS: Readonly<Record<string, CommandSpec>> = byName(COMMAND_GROUPS);

function byName(groups: readonly CommandGroup[]): Record<string, CommandSpec> {
  const all: Record<string, CommandSpec> = {};
  for (const group of groups) {
    for (const [name, spec] of Object.entries(group)) {
      if (Object.hasOwn(all, name)) {
        throw new TypeError(`admin command "${name}" is defined by two groups: keep one`);
      }
      all[name] = spec;
    }
  }
  return all;
}
