import { performance } from 'node:perf_hooks';

/**
 * Figure 10's count of a fan-out's copies at the sockets: every copy has its own id (derived from
 * the topic event's id and the member), so a second frame with an id already seen is a duplicate
 * and the distinct ids are the members reached.
 */
export class CopyCounter {
  readonly #seen = new Set<string>();
  duplicates = 0;
  /** When the last new copy came (performance.now()), 0 before any. */
  lastAt = 0;

  readonly hit = (id: string): void => {
    if (this.#seen.has(id)) {
      this.duplicates++;
      return;
    }
    this.#seen.add(id);
    this.lastAt = performance.now();
  };

  get distinct(): number {
    return this.#seen.size;
  }

  reset(): void {
    this.#seen.clear();
    this.duplicates = 0;
    this.lastAt = 0;
  }
}

/** What a fan-out to `members` left: copies missing, and copies beyond one per member. */
export interface CopyTally {
  missing: number;
  duplicates: number;
}

/**
 * The tally from distinct members reached (ids at the sockets) and the copies counted beyond them
 * (repeated ids), or, for stored copies, from the messages the queue gained (`counted`, where a
 * copy stored twice counts twice) with `repeated` 0.
 */
export function tallyCopies(members: number, counted: number, repeated = 0): CopyTally {
  return {
    missing: Math.max(0, members - counted),
    duplicates: repeated + Math.max(0, counted - members),
  };
}
