import { HeraldError } from '@herald/proto';
import { parseAdminArgs, usage } from './args.js';
import { COMMANDS } from './commands.js';
import { AdminContext } from './context.js';
import { loadAdminSettings } from './settings.js';
import { UsageError } from './usage-error.js';

export interface AdminIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
}

/**
 * Runs one admin command and resolves with the exit status: 0 done, 2 bad arguments (the message
 * names the flag and the fix), 1 anything else. Errors go to stderr, so with --json stdout holds
 * exactly one JSON object or nothing.
 */
export async function runAdmin(argv: readonly string[], io: AdminIo): Promise<number> {
  const fail = (message: string, status: number) => {
    io.stderr.write(`admin: ${message}\n`);
    return status;
  };
  let args: ReturnType<typeof parseAdminArgs>;
  try {
    args = parseAdminArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) return fail(err.message, 2);
    throw err;
  }
  if (args.command === 'help') {
    io.stdout.write(`${usage()}\n`);
    return 0;
  }
  const ctx = new AdminContext(loadAdminSettings(io.env));
  try {
    const spec = COMMANDS[args.command];
    if (!spec) throw new Error(`no command "${args.command}"`);
    const out = await spec.run(ctx, args.flags);
    io.stdout.write(args.json ? `${JSON.stringify(out.json)}\n` : `${out.text}\n`);
    if (out.warning) io.stderr.write(`admin: warning: ${out.warning}\n`);
    return out.exitCode ?? 0;
  } catch (err) {
    // Library errors name the field at fault, which is the flag's name: the argument was bad.
    if (err instanceof HeraldError) {
      const flag = flagOf(err);
      return fail(flag ? `${flag}: ${err.message}` : err.message, 2);
    }
    return fail(`${args.command} failed: ${err instanceof Error ? err.message : String(err)}`, 1);
  } finally {
    await ctx.close();
  }
}

/** The flag a library error's field corresponds to (they share names, `_` written `-`). */
function flagOf(err: HeraldError): string | undefined {
  return err.field === undefined ? undefined : `--${err.field.replaceAll('_', '-')}`;
}
