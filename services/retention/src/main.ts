import { exitOnStartupError, runService } from '@herald/kit';
import { loadConfig } from './config.js';
import { runOnce } from './run-once.js';
import { createRetention } from './service.js';

const USAGE =
  'usage: retention            run the service (schedule + ops endpoints)\n       retention run-once   one pass now; prints a JSON summary\n';

const command = process.argv[2];
if (command === undefined) {
  runService({
    name: 'retention',
    loadConfig,
    create: (config, deps) => createRetention(config, deps),
  });
} else if (command === 'run-once') {
  runOnce().catch((err: unknown) => exitOnStartupError('retention run-once', err));
} else {
  process.stderr.write(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
  process.exitCode = 64;
}
