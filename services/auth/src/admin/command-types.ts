import type { ParsedArgs } from './args.js';
import type { AdminContext } from './context.js';

/** What a command produced: one JSON object for --json, text otherwise. */
export interface CommandOutput {
  json: Record<string, unknown>;
  text: string;
  /** Printed on stderr; with `exitCode` 1 when the command only partly succeeded. */
  warning?: string;
  exitCode?: number;
}

export type Flags = ParsedArgs['flags'];
export type Command = (ctx: AdminContext, flags: Flags) => Promise<CommandOutput>;
