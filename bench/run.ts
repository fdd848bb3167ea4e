/**
 * `make bench`: measures Herald side by side with its baselines on this machine and writes the
 * figures (bench/results/*.json, docs/benchmarks.md). See bench/README.md for the knobs.
 */
import { runBench } from './src/runner.js';

runBench().then(
  (status) => process.exit(status),
  (err: unknown) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
