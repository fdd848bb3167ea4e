import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { CommandSpec, Flags } from './command-types.js';
import { COMMANDS } from './commands.js';
import { UsageError } from './usage-error.js';

type Commands = Readonly<Record<string, CommandSpec>>;

/** Every command's usage line, and what --help prints. */
export function usage(commands: Commands = COMMANDS): string {
  return `Herald admin: accounts, plans, API keys, payments, webhooks, push and Pusher apps.

Usage: npm run -s admin -- <command> [flags] [--json]

Commands:
${Object.values(commands)
  .map((c) => `  ${c.synopsis}`)
  .join('\n')}

--json prints exactly one JSON object on stdout. DATABASE_URL, NATS_URL and PLANS_FILE come
from the environment, else from .data/dev.env (written by \`make dev\`); PLANS_FILE defaults to
config/plans.json. SECRET_ENCRYPTION_KEY (the same as auth's) seals signing secrets: keys made
with --require-token and Pusher apps need it. DATE is 2025-07-01 (midnight UTC) or 2025-07-01T12:00:00Z. Exit status: 0
done, 2 bad arguments, 1 anything else.`;
}

export interface ParsedArgs {
  /** A command's name (`key create`), or `help` for --help. */
  command: string;
  json: boolean;
  flags: Flags;
}

/**
 * Parses the command line against `commands` (all of them by default), or throws a
 * {@link UsageError} naming the flag at fault and the fix.
 */
export function parseAdminArgs(argv: readonly string[], commands: Commands = COMMANDS): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: optionsOf(commands),
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(
      `${describeParseError(err)}: run \`npm run -s admin -- --help\` for each command's flags`,
    );
  }
  const { values, positionals } = parsed;
  const json = values.json === true;
  if (values.help) return { command: 'help', json, flags: {} };
  const command = positionals.join(' ');
  const spec = Object.hasOwn(commands, command) ? commands[command] : undefined;
  if (!spec) {
    const known = Object.keys(commands).join(', ');
    throw new UsageError(
      command === ''
        ? `a command is required: one of ${known} (--help shows their flags)`
        : `unknown command "${command}": use one of ${known} (--help shows their flags)`,
    );
  }
  const flags: Flags = {};
  for (const [flag, value] of Object.entries(values)) {
    if (flag === 'json' || flag === 'help' || value === undefined) continue;
    if (!Object.hasOwn(spec.flags, flag)) {
      throw new UsageError(`--${flag} is not a flag of \`${command}\`: usage: ${spec.synopsis}`);
    }
    // A boolean flag (--require-token) is present or not: kept as "true" when given.
    flags[flag] = String(value);
  }
  for (const flag of spec.required) {
    if (flags[flag] === undefined || flags[flag] === '') {
      throw new UsageError(`--${flag} is required: usage: ${spec.synopsis}`);
    }
  }
  return { command, json, flags };
}

/**
 * What parseArgs reads: --json, --help and every flag some command takes. A flag means one kind
 * of thing everywhere, so two commands giving it two kinds is a programming error.
 */
function optionsOf(commands: Commands): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, spec] of Object.entries(commands)) {
    for (const [flag, type] of Object.entries(spec.flags)) {
      const known = options[flag];
      if (flag === 'json' || flag === 'help' || (known && known.type !== type)) {
        throw new TypeError(
          `admin command "${name}" declares --${flag} as a ${type} flag, but it is ${flag === 'json' || flag === 'help' ? "the CLI's own" : `a ${known?.type} flag of another command`}: give it another name or the same kind`,
        );
      }
      options[flag] = { type };
    }
  }
  return options;
}

function describeParseError(err: unknown): string {
  const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  const code = (err as { code?: unknown }).code;
  const flag = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) return `unknown flag ${flag}`;
  return message;
}
