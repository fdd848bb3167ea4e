/** At most `max` tasks at once; the rest wait their turn in order (a freed slot is handed over). */
export class Slots {
  readonly #max: number;
  #busy = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max: number) {
    this.#max = max;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#busy >= this.#max) await new Promise<void>((r) => this.#waiting.push(r));
    else this.#busy++;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#busy--;
    }
  }
}
