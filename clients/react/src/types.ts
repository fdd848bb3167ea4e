import type { HeraldError, HeraldEvent } from '@herald/sdk';
import type { ReactNode } from 'react';

/** One notification as the bell keeps it: the event's id and time, and its payload as sent. */
export interface BellItem {
  id: string;
  /** Milliseconds since the epoch at which Herald accepted the event. */
  ts: number;
  /** The sender's JSON payload, any shape. */
  data: unknown;
  /** A topic event's copy: the topic it was sent to (absent on a direct event). */
  topic?: string | undefined;
}

/** Props of {@link NotificationBell}. The first six are the spec's; the rest are extensions. */
export interface NotificationBellProps {
  /** A web API key whose registered domain is this page's origin. */
  apikey: string;
  /** The signed-in user's id: a UUID v4, the recipient of their events. */
  userID: string;
  /** The full notifications page, linked from the dropdown's "View all". */
  path: string;
  /** Played once per new event (once per burst). Default `/ring.mp3`. */
  soundUrl?: string;
  /** Renders one notification from its payload; `data` may be any shape. */
  // biome-ignore lint/suspicious/noExplicitAny: the spec types data as any: payloads are the sender's JSON
  children: (data: any, event: BellItem) => ReactNode;

  dropdownClassName?: string;
  headerClassName?: string;
  titleClassName?: string;
  closeButtonClassName?: string;
  contentClassName?: string;
  emptyStateClassName?: string;
  footerClassName?: string;
  viewAllClassName?: string;
  poweredByClassName?: string;
  poweredByLinkClassName?: string;

  /**
   * Extension: the recipient token, for a key that requires one (minted by your server for
   * `userID`). Fixed: prefer `getToken`, which is asked again before each token expires.
   */
  token?: string;
  /** Extension: asked for a recipient token before each connect and before expiry (the SDK's). */
  getToken?: () => Promise<string>;
  /** Extension: where ingress-api listens (self-hosting). Default the SDK's. */
  baseUrl?: string;
  /** Extension: where socket-edge listens (self-hosting). Default the SDK's. */
  wsUrl?: string;
  /** Extension: called once per new event, in every tab that shows the bell. */
  onNotification?: (data: unknown, event: HeraldEvent) => void;
  /** Extension: socket errors (wrong endpoint, refused key, network), from the SDK. */
  onError?: (error: HeraldError) => void;
  /** Extension: how many notifications the dropdown keeps (newest first). Default 50. */
  maxItems?: number;
  /** Extension: the language of the bell's texts (`en`, `fr`, `sw`) and number format. Default `en`. */
  locale?: string;
  /** Extension: where the "Powered by Herald" link points. Default {@link HERALD_URL}. */
  poweredByHref?: string;
  /** Extension: class of the wrapper around the bell and the dropdown. */
  className?: string;
  /** Extension: class of the bell button (its `data-state` is `connected` or `disconnected`). */
  bellClassName?: string;
  /** Extension: class of the unread badge. */
  badgeClassName?: string;
  /** Extension: class of an item whose `children` threw (the fallback shown for it alone). */
  itemErrorClassName?: string;
}
