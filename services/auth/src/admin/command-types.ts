import type { AdminContext } from './context.js';

/** What a command produced: one JSON object for --json, text otherwise. */
export interface CommandOutput {
  json: Record<string, unknown>;
  text: string;
  /** Printed on stderr; with `exitCode` 1 when the command only partly succeeded. */
  warning?: string;
  exitCode?: number;
}

/** A flag's kind: a string takes a value; a boolean is given or not (read as "true" when given). */
export type FlagKind = 'string' | 'boolean';

/** The flags a command was given, by name (`--require-token` is `require-token`). */
export type Flags<F extends string = string> = Partial<Record<F, string>>;

/** One admin command: the flags it takes, its line in --help, and what it does. */
export interface CommandSpec<F extends string = string> {
  /** Every flag it takes, with its kind; any other flag is refused, naming the command's usage. */
  flags: { readonly [K in F]: FlagKind };
  /** The flags it cannot run without. */
  required: readonly NoInfer<F>[];
  /** Its line in --help, also quoted when a flag is wrong. */
  synopsis: string;
  run(ctx: AdminContext, flags: Flags<F>): Promise<CommandOutput>;
}

/** A wing's commands by name (`key create`), in --help's order: admin/commands.ts lists them. */
export type CommandGroup = Readonly<Record<string, CommandSpec>>;

/** One command, its `run` checked against the flags it declares. */
export function command<F extends string>(spec: CommandSpec<F>): CommandSpec {
  return spec;
}
