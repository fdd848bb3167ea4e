/**
 * The admin CLI: `npm run -s admin -- <command> [flags] [--json]` from the repo root. See
 * admin/args.ts for the commands and README.md for examples.
 */
import { runAdmin } from './admin/cli.js';

runAdmin(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}).then(
  (status) => {
    process.exitCode = status;
  },
  (err: unknown) => {
    process.stderr.write(`admin: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
