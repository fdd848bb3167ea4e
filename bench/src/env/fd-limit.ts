import { readFileSync } from 'node:fs';

/**
 * This process's soft limit on open files (children inherit it), from /proc/self/limits; undefined
 * when unknown. Every socket is a descriptor, so it caps how many connections one process holds.
 */
export function openFilesLimit(limits = readLimits()): number | undefined {
  const line = limits?.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.replace('Max open files', '').trim().split(/\s+/)[0];
  if (soft === undefined || soft === 'unlimited') return undefined;
  const n = Number(soft);
  return Number.isInteger(n) ? n : undefined;
}

function readLimits(): string | undefined {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
}
