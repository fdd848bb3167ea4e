import { parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  email: { type: 'string' },
  plan: { type: 'string' },
  until: { type: 'string' },
  account: { type: 'string' },
  kind: { type: 'string' },
  client: { type: 'string' },
  domain: { type: 'string' },
  scope: { type: 'string' },
  'require-token': { type: 'boolean' },
  'inbox-days': { type: 'string' },
  key: { type: 'string' },
  phone: { type: 'string' },
  payment: { type: 'string' },
} as const;

type Flag = Exclude<keyof typeof OPTIONS, 'json' | 'help'>;

interface CommandSpec {
  /** Flags the command takes, required ones first. */
  flags: readonly Flag[];
  required: readonly Flag[];
  synopsis: string;
}

export const COMMANDS = {
  migrate: { flags: [], required: [], synopsis: 'migrate' },
  'account create': {
    flags: ['email', 'plan', 'until'],
    required: ['email'],
    synopsis: 'account create --email E [--plan P --until DATE]',
  },
  'account set-plan': {
    flags: ['account', 'plan', 'until'],
    required: ['account', 'plan'],
    synopsis:
      'account set-plan --account ID --plan P [--until DATE] (--until required for paid plans)',
  },
  'account reset-token': {
    flags: ['email'],
    required: ['email'],
    synopsis:
      'account reset-token --email E (prints a one-time password-reset token; valid 1 hour)',
  },
  'key create': {
    flags: ['account', 'kind', 'client', 'domain', 'scope', 'require-token', 'inbox-days'],
    required: ['account', 'kind', 'client'],
    synopsis:
      'key create --account ID --kind live|test --client web|mobile [--domain D] [--scope subscribe|dispatch|both] [--require-token] [--inbox-days N (1-365: keep every event N days, with read state)]',
  },
  'key rotate-secret': {
    flags: ['key'],
    required: ['key'],
    synopsis:
      'key rotate-secret --key KEY_ID (a new signing secret; the old one stays valid TOKEN_SECRET_OVERLAP_MS)',
  },
  'key reset-test': {
    flags: ['account'],
    required: ['account'],
    synopsis: 'key reset-test --account ID',
  },
  'key revoke': { flags: ['key'], required: ['key'], synopsis: 'key revoke --key KEY_ID' },
  'key list': { flags: ['account'], required: ['account'], synopsis: 'key list --account ID' },
  'nats-user create': {
    flags: ['account'],
    required: ['account'],
    synopsis:
      'nats-user create --account ID (a NATS user for a backend: dispatch for that account only)',
  },
  'billing checkout': {
    flags: ['account', 'plan', 'phone'],
    required: ['account', 'plan', 'phone'],
    synopsis: 'billing checkout --account ID --plan P --phone N (sends an M-Pesa prompt)',
  },
  'billing show': {
    flags: ['payment'],
    required: ['payment'],
    synopsis: 'billing show --payment ID (its state and history)',
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

export interface ParsedArgs {
  command: CommandName | 'help';
  json: boolean;
  flags: Partial<Record<Flag, string>>;
}

export const USAGE = `Herald admin: accounts, plans, API keys and payments.

Usage: npm run -s admin -- <command> [flags] [--json]

Commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.synopsis}`)
  .join('\n')}

--json prints exactly one JSON object on stdout. DATABASE_URL, NATS_URL and PLANS_FILE come
from the environment, else from .data/dev.env (written by \`make dev\`); PLANS_FILE defaults to
config/plans.json. SECRET_ENCRYPTION_KEY (the same as auth's) seals signing secrets: keys made
with --require-token need it. DATE is 2025-07-01 (midnight UTC) or 2025-07-01T12:00:00Z. Exit status: 0
done, 2 bad arguments, 1 anything else.`;

/** Parses the command line, or throws a {@link UsageError} naming the flag at fault and the fix. */
export function parseAdminArgs(argv: readonly string[]): ParsedArgs {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw new UsageError(
      `${describeParseError(err)}: run \`npm run -s admin -- --help\` for each command's flags`,
    );
  }
  const { values, positionals } = parsed;
  const json = values.json === true;
  if (values.help) return { command: 'help', json, flags: {} };
  const name = positionals.join(' ');
  if (!Object.hasOwn(COMMANDS, name)) {
    const known = Object.keys(COMMANDS).join(', ');
    throw new UsageError(
      name === ''
        ? `a command is required: one of ${known} (--help shows their flags)`
        : `unknown command "${name}": use one of ${known} (--help shows their flags)`,
    );
  }
  const command = name as CommandName;
  const spec: CommandSpec = COMMANDS[command];
  const flags: Partial<Record<Flag, string>> = {};
  for (const flag of Object.keys(OPTIONS) as (keyof typeof OPTIONS)[]) {
    if (flag === 'json' || flag === 'help') continue;
    const value = values[flag];
    if (value === undefined) continue;
    if (!spec.flags.includes(flag)) {
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

function describeParseError(err: unknown): string {
  const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  const code = (err as { code?: unknown }).code;
  const flag = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag) return `unknown flag ${flag}`;
  return message;
}

function parse(argv: readonly string[]) {
  return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
}
