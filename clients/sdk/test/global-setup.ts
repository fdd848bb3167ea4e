import { build } from '../scripts/build.js';

/** Builds dist/ once per vitest run, and only when a source is newer than it. */
export default async function setup(): Promise<void> {
  await build({ ifStale: true });
}
