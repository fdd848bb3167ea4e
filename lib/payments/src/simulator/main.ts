/**
 * The Daraja simulator as a process (scripts/dev.sh runs it):
 *   DARAJA_SIM_PORT (default 8450), DARAJA_SIM_HOST (127.0.0.1),
 *   DARAJA_SIM_RESULT_DELAY_MS (default 3000: how long the "customer" takes to answer),
 *   DARAJA_SIM_LATE_CALLBACK_MS (default 10000), DARAJA_SIM_CA_FILE (CA to trust for callbacks),
 *   DARAJA_SIM_TLS_CERT_FILE and DARAJA_SIM_TLS_KEY_FILE (serve HTTPS; both or neither).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { startDarajaSimulator } from './server.js';

const Env = z.object({
  DARAJA_SIM_PORT: z.coerce.number().int().min(0).max(65535).default(8450),
  DARAJA_SIM_HOST: z.string().default('127.0.0.1'),
  DARAJA_SIM_RESULT_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(3000),
  DARAJA_SIM_LATE_CALLBACK_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  DARAJA_SIM_CA_FILE: z.string().optional(),
  DARAJA_SIM_TLS_CERT_FILE: z.string().min(1).optional(),
  DARAJA_SIM_TLS_KEY_FILE: z.string().min(1).optional(),
});

async function main(): Promise<void> {
  const parsed = Env.safeParse(process.env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`daraja-sim: bad environment: ${issues.join('; ')}`);
  }
  const env = parsed.data;
  if (!env.DARAJA_SIM_TLS_CERT_FILE !== !env.DARAJA_SIM_TLS_KEY_FILE) {
    throw new Error(
      'daraja-sim: set both DARAJA_SIM_TLS_CERT_FILE and DARAJA_SIM_TLS_KEY_FILE to serve HTTPS, or neither',
    );
  }
  const tls =
    env.DARAJA_SIM_TLS_CERT_FILE && env.DARAJA_SIM_TLS_KEY_FILE
      ? {
          cert: readFileSync(env.DARAJA_SIM_TLS_CERT_FILE, 'utf8'),
          key: readFileSync(env.DARAJA_SIM_TLS_KEY_FILE, 'utf8'),
        }
      : undefined;
  const sim = await startDarajaSimulator(
    {
      resultDelayMs: env.DARAJA_SIM_RESULT_DELAY_MS,
      lateCallbackMs: env.DARAJA_SIM_LATE_CALLBACK_MS,
      ca: env.DARAJA_SIM_CA_FILE ? readFileSync(env.DARAJA_SIM_CA_FILE, 'utf8') : undefined,
    },
    { port: env.DARAJA_SIM_PORT, host: env.DARAJA_SIM_HOST, ...(tls ? { tls } : {}) },
  );
  process.stdout.write(`daraja-sim listening on ${sim.url}\n`);
  const stop = () => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
