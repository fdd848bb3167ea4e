import { describe } from 'vitest';
import { ackTests } from './acks.tests.js';
import { browserTests } from './browser.tests.js';
import { useSdkStack } from './context.js';
import { deliveryTests } from './delivery.tests.js';
import { errorTests } from './errors.tests.js';
import { notifyTests } from './notify.tests.js';
import { processExitTests } from './process-exit.tests.js';
import { readmeTests } from './readme.tests.js';
import { reconnectTests } from './reconnect.tests.js';
import { tokenTests } from './tokens.tests.js';
import { unavailableTests } from './unavailable.tests.js';

// One stack for every scenario (starting one takes seconds). Order matters only at the end:
// the browser test stops and restarts the edge, and the last one stops NATS.
describe('@herald/sdk (built) against the real stack', () => {
  const ctx = useSdkStack();
  deliveryTests(ctx);
  ackTests(ctx);
  notifyTests(ctx);
  reconnectTests(ctx);
  errorTests(ctx);
  tokenTests(ctx);
  readmeTests(ctx);
  processExitTests(ctx);
  browserTests(ctx);
  unavailableTests(ctx);
});
