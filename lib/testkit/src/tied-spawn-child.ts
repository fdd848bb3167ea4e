/**
 * A script that starts the kit's nats-server and Postgres, prints their ports, then dies
 * as a failing measure script does: `throw` (an uncaught error) or `wait` (to be killed by a
 * signal). Run by tied-spawn.test.ts.
 */
import { startNatsServer } from './nats-server.js';
import { startPostgres } from './postgres.js';

const nats = await startNatsServer();
const pg = await startPostgres();
process.stdout.write(`${JSON.stringify({ natsPort: nats.port, pgPort: pg.port })}\n`);
if (process.argv[2] === 'throw') {
  setTimeout(() => {
    throw new Error('a measure script failing');
  }, 10);
} else {
  setInterval(() => undefined, 1000);
}
