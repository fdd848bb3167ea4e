interface EventSource {
  addEventListener?(type: string, listener: () => void): void;
  removeEventListener?(type: string, listener: () => void): void;
}

/**
 * Calls `wake` when the browser comes back online or the tab becomes visible, where those events
 * exist (not in Node or React Native). A socket that died while the laptop slept or the tab was
 * frozen reconnects at once instead of after its backoff. Returns the remover.
 */
export function watchWake(wake: () => void): () => void {
  const win = globalThis as EventSource & { document?: EventSource & { visibilityState?: string } };
  const doc = win.document;
  const onVisible = () => {
    if (doc?.visibilityState === 'visible') wake();
  };
  win.addEventListener?.('online', wake);
  doc?.addEventListener?.('visibilitychange', onVisible);
  return () => {
    win.removeEventListener?.('online', wake);
    doc?.removeEventListener?.('visibilitychange', onVisible);
  };
}
