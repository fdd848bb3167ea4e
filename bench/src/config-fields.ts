import { z } from 'zod';

/* The value shapes of config.ts's knobs, each with the message a bad value gets. */

export const int = (min: number, max: number) =>
  z.coerce
    .number({ error: `must be an integer between ${min} and ${max}` })
    .int(`must be an integer between ${min} and ${max}`)
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    .optional();

export const intList = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be a comma-separated list of integers, e.g. 1000,5000')
    .transform((s) => s.split(',').map(Number))
    .refine((xs) => xs.every((x) => x >= min && x <= max), `every value must be ${min}..${max}`)
    .optional();

export const fractionList = z
  .string()
  .regex(/^0?\.\d+(,0?\.\d+)*$/, 'must be comma-separated fractions of 1, e.g. 0.1,0.5,0.8')
  .transform((s) => s.split(',').map(Number))
  .refine((xs) => xs.every((x) => x > 0 && x < 1), 'every value must be between 0 and 1')
  .optional();

export const cpuList = z
  .string()
  .regex(/^\d+([-,]\d+)*$/, 'must be a taskset CPU list such as 0 or 0-1 or 0,2')
  .optional();

/** `NAME=value` pairs separated by commas: a service's extra environment. */
export function envPairs() {
  return z
    .string()
    .regex(
      /^([A-Z][A-Z0-9_]*=[^,]*)(,[A-Z][A-Z0-9_]*=[^,]*)*$/,
      'NAME=value pairs, comma-separated',
    )
    .optional();
}

export function pairsOf(pairs: string | undefined): Record<string, string> {
  return Object.fromEntries(
    (pairs ?? '')
      .split(',')
      .filter((pair) => pair !== '')
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

/** One fraction of 1, e.g. 0.5. */
export const fraction = z
  .string()
  .regex(/^0?\.\d+$/, 'must be a fraction of 1, e.g. 0.5')
  .transform(Number)
  .refine((x) => x > 0 && x < 1, 'must be between 0 and 1')
  .optional();
