/**
 * Serves the bell example with Vite over HTTPS, configured for one user of the `make dev` stack,
 * then prints the URL to open and the curl that sends that user an event. `make example`
 * (scripts/example.sh) runs it with the key it issued; its variables are all required.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { z } from 'zod';

const Env = z.object({
  HERALD_EXAMPLE_PORT: z.coerce.number().int().min(1).max(65535),
  /** The page's origin, which is the web key's registered domain. */
  HERALD_EXAMPLE_ORIGIN: z.url(),
  HERALD_EXAMPLE_TLS_CERT: z.string().min(1),
  HERALD_EXAMPLE_TLS_KEY: z.string().min(1),
  /** The CA file as the printed curl names it (relative to the repository root). */
  HERALD_EXAMPLE_CA: z.string().min(1),
  HERALD_EXAMPLE_KEY: z.string().startsWith('hk_'),
  HERALD_EXAMPLE_KEY_EXPIRES_AT: z.string().min(1),
  HERALD_EXAMPLE_USER: z.uuid(),
  HERALD_BASE_URL: z.url(),
  HERALD_WS_URL: z.url(),
});

const parsed = Env.safeParse(process.env);
if (!parsed.success) {
  const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  console.error(`example: bad environment (run it with make example): ${issues.join('; ')}`);
  process.exit(2);
}
const env = parsed.data;

// The page reads these as its defaults (src/main.tsx); its query string still overrides them.
Object.assign(process.env, {
  VITE_HERALD_API_KEY: env.HERALD_EXAMPLE_KEY,
  VITE_HERALD_USER: env.HERALD_EXAMPLE_USER,
  VITE_HERALD_BASE_URL: env.HERALD_BASE_URL,
  VITE_HERALD_WS_URL: env.HERALD_WS_URL,
});

const server = await createServer({
  configFile: join(dirname(fileURLToPath(import.meta.url)), 'vite.config.ts'),
  server: {
    host: '127.0.0.1',
    port: env.HERALD_EXAMPLE_PORT,
    strictPort: true,
    https: {
      cert: readFileSync(env.HERALD_EXAMPLE_TLS_CERT),
      key: readFileSync(env.HERALD_EXAMPLE_TLS_KEY),
    },
  },
});
await server.listen();

const url = `${env.HERALD_EXAMPLE_ORIGIN}/`;
const body = JSON.stringify({
  recipient: env.HERALD_EXAMPLE_USER,
  payload: { title: 'Hello from curl', body: 'sent with make example' },
  api_key: env.HERALD_EXAMPLE_KEY,
  client: 'web',
});
console.log(`
The bell example is running. Ctrl-C stops it.

Open ${url}
in a browser that trusts ${env.HERALD_EXAMPLE_CA} (make dev printed how): the bell turns green.

Then send its user an event; the bell rings, counts it, and shows it when opened. The key is a
web key for ${env.HERALD_EXAMPLE_ORIGIN}, so the request names that Origin (expires at ${env.HERALD_EXAMPLE_KEY_EXPIRES_AT}; make example issues a new one then):
  curl --cacert ${env.HERALD_EXAMPLE_CA} -H 'content-type: application/json' -H 'Origin: ${env.HERALD_EXAMPLE_ORIGIN}' -d '${body}' ${env.HERALD_BASE_URL}/notify
`);

// Vite closes the server on SIGTERM itself (and exits 143); Ctrl-C closes it the same way.
process.once('SIGINT', () => {
  void server.close().then(() => process.exit(130));
});
