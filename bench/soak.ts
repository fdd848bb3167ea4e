/**
 * `make soak`: the whole stack under a steady mixed load for SOAK_MINUTES (bench/src/soak/),
 * every process's memory sampled; writes bench/results/soak-<timestamp>/ and exits 1 when an
 * accepted event was lost, a process's memory grew too steeply, or something outlived its owner.
 */
import { loadSoakConfig } from './src/soak/config.js';
import { runSoak } from './src/soak/run.js';

const cfg = loadSoakConfig();
// The run's own bound: the load, the end's wait, and ten minutes for the stack and the checks.
const deadlineMs = cfg.minutes * 60_000 + cfg.drainTimeoutMs + 600_000;
const deadline = setTimeout(() => {
  process.stderr.write(`soak: not done after ${deadlineMs / 60_000} minutes: giving up\n`);
  process.exit(1);
}, deadlineMs);
deadline.unref();

const started = Date.now();
runSoak(cfg).then(
  (r) => {
    process.stdout.write(r.markdown);
    process.stdout.write(
      `\nResults: ${r.dir} (${((Date.now() - started) / 1000).toFixed(0)} s in all)\n`,
    );
    process.exit(r.passed ? 0 : 1);
  },
  (err: unknown) => {
    process.stderr.write(
      `soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
