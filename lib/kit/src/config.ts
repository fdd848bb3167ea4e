import { accessSync, constants, statSync } from 'node:fs';
import { z } from 'zod';

/** Thrown by {@link parseEnv}; its message lists every bad variable and what it should be. */
export class ConfigError extends Error {
  constructor(service: string, problems: string[]) {
    super(`${service}: invalid configuration\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses environment variables with a zod schema whose keys are the variable names. Returns the
 * typed result or throws one {@link ConfigError} naming every bad variable.
 */
export function parseEnv<S extends z.ZodObject>(
  service: string,
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    const value = env[name];
    const shown =
      value === undefined
        ? 'unset'
        : /KEY|SECRET|PASSWORD|TOKEN/i.test(name)
          ? 'set'
          : JSON.stringify(withoutCredentials(value));
    return `${name} (${shown}): ${issue.message}`;
  });
  throw new ConfigError(service, problems);
}

/** A boolean variable: `true|false|1|0|yes|no`, default when unset. */
export const envBool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1' || v === 'yes'));

/**
 * An integer variable within bounds, default when unset. Only plain decimal digits (an optional
 * minus, surrounding spaces ignored): an empty value (a `KEY=` line of a compose .env file) is
 * refused rather than read as 0, and so are `0x1bb`, `1e3` and `12.5`.
 */
export const envInt = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return fallback;
      const text = String(raw).trim();
      const problem =
        text === ''
          ? `is empty: set a whole number from ${min} to ${max}, or unset it for the default (${fallback})`
          : !/^-?\d+$/.test(text)
            ? `must be a whole number from ${min} to ${max}, in decimal digits`
            : Number(text) < min
              ? `must be at least ${min}`
              : Number(text) > max
                ? `must be at most ${max}`
                : undefined;
      if (problem === undefined) return Number(text);
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    });

export const envPort = (fallback: number) => envInt(fallback, 0, 65535);

/** Settings every service shares: logging, NATS, TLS on its listener. */
export const CommonEnv = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NATS_URL: z
    .string()
    .min(1, 'must be a NATS URL such as nats://127.0.0.1:4222')
    .default('nats://127.0.0.1:4222'),
  /** CA bundle to verify a TLS NATS server; set it when NATS serves TLS. */
  NATS_CA_FILE: z.string().optional(),
  NATS_CERT_FILE: z.string().optional(),
  NATS_KEY_FILE: z.string().optional(),
  NATS_USER: z.string().optional(),
  NATS_PASSWORD: z.string().optional(),
  /**
   * How often the NATS client pings its server, ms; two unanswered pings and it moves to another
   * node. A node cut off the network (no reset, packets just vanish) is noticed only then: in a
   * cluster a shorter interval shortens that stall (deploy/compose.cluster.yaml sets 3000).
   */
  NATS_PING_INTERVAL_MS: envInt(10_000, 1000, 600_000),
  /**
   * How long one attempt to connect to a NATS node may take (TCP, TLS, the server's answer), ms,
   * before the client tries the next. A node cut off the network never refuses: each attempt on it
   * waits this long, so in a cluster a shorter one shortens a partition's stall
   * (deploy/compose.cluster.yaml sets 3000). Default 20000, nats.js's own.
   */
  NATS_CONNECT_TIMEOUT_MS: envInt(20_000, 500, 600_000),
  /** Certificate and key of this service's own listener (PEM files). */
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  /** Serve plain HTTP/WS: only behind a TLS-terminating proxy. */
  TLS_DISABLED: envBool(false),
  HOST: z.string().default('0.0.0.0'),
  /** How long graceful shutdown may take before the process exits anyway, ms. */
  SHUTDOWN_TIMEOUT_MS: envInt(10_000, 100, 600_000),
  /**
   * Most time a client may take to send a whole request, headers and body, on this service's
   * listeners; a slower one gets 408 and its connection closed. Default 10000.
   */
  HTTP_REQUEST_TIMEOUT_MS: envInt(10_000, 100, 600_000),
  /**
   * Most time a client may take to send a request's headers (WebSocket upgrades included). At most
   * HTTP_REQUEST_TIMEOUT_MS. Default 10000.
   */
  HTTP_HEADERS_TIMEOUT_MS: envInt(10_000, 100, 600_000),
  /**
   * How long an idle keep-alive connection is kept open, ms. Above the 60 s idle timeout of common
   * load balancers, so the balancer, not Herald, closes idle connections (else it may reuse one
   * Herald is closing and answer 502). Default 65000.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: envInt(65_000, 1000, 3_600_000),
});
export type CommonEnv = z.infer<typeof CommonEnv>;

/**
 * Refinement for schemas extending {@link CommonEnv}: TLS needs both files unless disabled, and
 * the header timeout cannot exceed the whole request's.
 */
export function requireTls(env: CommonEnv, ctx: z.RefinementCtx): void {
  if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['HTTP_HEADERS_TIMEOUT_MS'],
      message: `must be at most HTTP_REQUEST_TIMEOUT_MS (${env.HTTP_REQUEST_TIMEOUT_MS}): the headers are part of the request`,
    });
  }
  if (env.TLS_DISABLED) return;
  for (const name of ['TLS_CERT_FILE', 'TLS_KEY_FILE'] as const) {
    if (!env[name]) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message:
          'is required: every Herald listener serves TLS (set TLS_DISABLED=true only behind a TLS-terminating proxy)',
      });
    }
  }
}

/** Variables naming PEM files every service may read. */
const FILE_VARIABLES = [
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'NATS_CA_FILE',
  'NATS_CERT_FILE',
  'NATS_KEY_FILE',
] as const;

/**
 * Throws one {@link ConfigError} naming every file variable whose file this process cannot read.
 * Run at start, before any connection: without it a missing certificate surfaced as a bare
 * `ENOENT` after NATS was reached and the queue streams were created.
 */
export function checkConfigFiles(service: string, config: CommonEnv): void {
  const problems: string[] = [];
  for (const name of FILE_VARIABLES) {
    const path = config[name];
    if (!path || (config.TLS_DISABLED && name.startsWith('TLS_'))) continue;
    const why = unreadable(path);
    if (why)
      problems.push(
        `${name} (${JSON.stringify(path)}): ${why}: give the path of a PEM file this process can read`,
      );
  }
  if (problems.length > 0) throw new ConfigError(service, problems);
}

function unreadable(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'is not a file';
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES'
        ? 'permission denied'
        : `cannot be read (${code ?? String(err)})`;
  }
}

/** Hides the password of a URL-shaped value (`scheme://user:pass@host`) before it is printed. */
export function withoutCredentials(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}
