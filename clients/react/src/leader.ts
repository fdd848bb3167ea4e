/** Timing of the BroadcastChannel fallback (browsers without Web Locks). */
export interface FallbackTiming {
  /** The leader says it is alive this often. */
  heartbeatMs: number;
  /** A leader not heard from for this long is taken as gone. */
  timeoutMs: number;
}

const DEFAULT_TIMING: FallbackTiming = { heartbeatMs: 1000, timeoutMs: 3000 };

/**
 * Runs for leader of `name` among this origin's tabs: `lead()` is called in exactly one tab at a
 * time, and the function it returns when that tab stops leading (stop(), or the tab closes). The
 * returned function withdraws (and resigns when leading). Web Locks make this exact: the browser
 * grants the lock to one tab and, when that tab closes or crashes, to the next waiting one.
 * Without them a BroadcastChannel heartbeat elects the lowest id (a closing leader says goodbye,
 * so the others take over at once).
 */
export function runForLeader(
  name: string,
  lead: () => () => void,
  timing: FallbackTiming = DEFAULT_TIMING,
): () => void {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (locks && typeof locks.request === 'function') return viaLocks(locks, name, lead);
  if (typeof BroadcastChannel === 'function') return viaChannel(name, lead, timing);
  // Neither (an old browser): every tab leads its own socket.
  const end = lead();
  return end;
}

function viaLocks(locks: LockManager, name: string, lead: () => () => void): () => void {
  const abort = new AbortController();
  let resign: (() => void) | undefined;
  let stopped = false;
  locks
    .request(name, { signal: abort.signal }, () => {
      if (stopped) return undefined;
      const end = lead();
      return new Promise<void>((resolve) => {
        resign = () => {
          end();
          resolve();
        };
      });
    })
    .catch(() => {
      // AbortError: withdrawn while still waiting for the lock.
    });
  return () => {
    if (stopped) return;
    stopped = true;
    if (resign) resign();
    else abort.abort();
  };
}

type Message = { t: 'beat' | 'claim' | 'bye'; id: string };

function viaChannel(name: string, lead: () => () => void, timing: FallbackTiming): () => void {
  const channel = new BroadcastChannel(name);
  const me = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  let leaderAt = 0;
  let leader: string | undefined;
  let claimedAt = 0;
  let end: (() => void) | undefined;
  let stopped = false;
  const post = (t: Message['t']) => channel.postMessage({ t, id: me } satisfies Message);

  const tick = () => {
    const now = Date.now();
    if (end) {
      post('beat');
      return;
    }
    if (leader !== undefined && now - leaderAt < timing.timeoutMs) return;
    if (claimedAt === 0) {
      claimedAt = now;
      post('claim');
    } else if (now - claimedAt >= timing.heartbeatMs) {
      // Nobody lower claimed or beat within a heartbeat: lead.
      claimedAt = 0;
      leader = me;
      end = lead();
      post('beat');
    }
  };

  channel.onmessage = (ev: MessageEvent<Message>) => {
    const { t, id } = ev.data;
    if (t === 'bye') {
      if (id === leader) leader = undefined;
      return;
    }
    if (t === 'claim') {
      // A leader answers a claim at once (and keeps leading). Otherwise a lower id wins the
      // contest: the others stand back for a whole timeout, so they do not claim again and
      // snatch it before its first heartbeat.
      if (end) post('beat');
      else if (id < me) {
        claimedAt = 0;
        leader = id;
        leaderAt = Date.now();
      }
      return;
    }
    // A beat: two leaders (a partition healed) keep the lower id.
    if (end && id < me) {
      end();
      end = undefined;
    }
    if (!end) {
      leader = id;
      leaderAt = Date.now();
      claimedAt = 0;
    }
  };

  const timer = setInterval(tick, timing.heartbeatMs / 2);
  tick();
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    if (end) {
      end();
      end = undefined;
      post('bye');
    }
    // Closing at once may drop the goodbye still queued on the channel.
    setTimeout(() => channel.close(), 0);
    globalThis.removeEventListener?.('pagehide', stop);
  };
  globalThis.addEventListener?.('pagehide', stop);
  return stop;
}
