/**
 * The command line was wrong: the CLI prints the message (which names the flag and the fix) and
 * exits 2. Anything else that fails exits 1.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
