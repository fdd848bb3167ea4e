/** Events closer together than this make one sound: a queue drained on connect rings once. */
export const BURST_MS = 1500;

/**
 * Plays the notification sound, once per burst. Browsers refuse `play()` until the page had a
 * user gesture (autoplay policy): a refused ring is kept and played at the first click or key
 * press, once, however many events arrived meanwhile.
 */
export class Ringer {
  #url: string;
  #audio: HTMLAudioElement | undefined;
  #lastAt = Number.NEGATIVE_INFINITY;
  #waitingForGesture = false;
  readonly #now: () => number;

  constructor(url: string, now: () => number = Date.now) {
    this.#url = url;
    this.#now = now;
  }

  set url(url: string) {
    if (url === this.#url) return;
    this.#url = url;
    this.#audio = undefined;
  }

  ring(): void {
    const now = this.#now();
    if (now - this.#lastAt < BURST_MS) return;
    this.#lastAt = now;
    if (this.#waitingForGesture) return;
    this.#play();
  }

  dispose(): void {
    this.#unlisten();
    this.#audio?.pause();
    this.#audio = undefined;
  }

  #play(): void {
    if (typeof Audio !== 'function') return;
    this.#audio ??= new Audio(this.#url);
    const audio = this.#audio;
    audio.currentTime = 0;
    let played: Promise<void> | undefined;
    try {
      played = audio.play();
    } catch {
      return;
    }
    played?.catch((err: unknown) => {
      if ((err as { name?: string } | null)?.name === 'NotAllowedError') this.#waitForGesture();
      // Anything else (a missing file, no audio device) is not worth more than silence.
    });
  }

  #waitForGesture(): void {
    if (this.#waitingForGesture) return;
    this.#waitingForGesture = true;
    for (const type of GESTURES) globalThis.addEventListener?.(type, this.#onGesture, true);
  }

  readonly #onGesture = (): void => {
    this.#unlisten();
    this.#play();
  };

  #unlisten(): void {
    if (!this.#waitingForGesture) return;
    this.#waitingForGesture = false;
    for (const type of GESTURES) globalThis.removeEventListener?.(type, this.#onGesture, true);
  }
}

const GESTURES = ['pointerdown', 'keydown'] as const;
