import { Bell } from 'lucide-react';
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { badgeText } from './badge.js';
import { DEFAULT_MAX_ITEMS, DEFAULT_SOUND_URL } from './bell-hub.js';
import { Dropdown } from './Dropdown.js';
import { messagesFor } from './messages.js';
import type { NotificationBellProps } from './types.js';
import { useBell } from './use-bell.js';

/** The bell's colours: the spec's green while connected, red while not. */
export const CONNECTED_COLOR = '#16a34a';
export const DISCONNECTED_COLOR = '#dc2626';

/**
 * Herald's headless notification bell: a bell (green connected, red not) with an unread badge and
 * a dropdown of the user's notifications rendered by `children(data)`. One socket per browser,
 * shared by the tabs; unread state in localStorage, in step across tabs. Styled only through the
 * class-name props (and `data-*` attributes); `@herald/react/styles.css` is an optional start.
 */
export function NotificationBell(props: NotificationBellProps): ReactNode {
  const {
    apikey,
    userID,
    baseUrl,
    wsUrl,
    path,
    soundUrl = DEFAULT_SOUND_URL,
    maxItems = DEFAULT_MAX_ITEMS,
    locale = 'en',
  } = props;
  const { hub, snapshot } = useBell({
    apikey,
    userID,
    baseUrl,
    wsUrl,
    token: props.token,
    getToken: props.getToken,
  });
  const [open, setOpen] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const root = useRef<HTMLDivElement>(null);
  const bell = useRef<HTMLButtonElement>(null);
  const id = useId();
  const m = messagesFor(locale);
  const callbacks = useRef(props);
  callbacks.current = props;

  useEffect(() => {
    if (!hub) return;
    hub.ringer.url = soundUrl;
    hub.maxItems = maxItems;
  }, [hub, soundUrl, maxItems]);

  useEffect(() => {
    if (!hub) return;
    const offNew = hub.onNew((items, events) => {
      const count = new Intl.NumberFormat(locale).format(items.length);
      setAnnouncement(m.announce(items.length, count));
      events.forEach((event) => {
        try {
          callbacks.current.onNotification?.(event.payload, event);
        } catch (err) {
          console.error(err);
        }
      });
    });
    // A misconfigured bell must not fail silently: without onError, the console hears of it.
    const offError = hub.onError((error) => {
      const { onError } = callbacks.current;
      if (onError) onError(error);
      else console.warn(`Herald bell: ${error.kind} ${error.code}: ${error.message}`);
    });
    return () => {
      offNew();
      offError();
    };
  }, [hub, locale, m]);

  // Open means read: now, and for every event that arrives while it stays open.
  const { unread } = snapshot.state;
  useEffect(() => {
    if (open && unread > 0) hub?.markRead();
  }, [open, unread, hub]);

  useEffect(() => {
    if (!open) return;
    const onPointerDown = (ev: Event) => {
      if (!root.current?.contains(ev.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointerDown, true);
    return () => document.removeEventListener('pointerdown', onPointerDown, true);
  }, [open]);

  const close = () => {
    setOpen(false);
    bell.current?.focus();
  };

  const connected = snapshot.connection === 'connected';
  const count = unread > 0 ? m.unread(badgeText(unread, locale)) : m.noUnread;
  const label = `${m.title}: ${connected ? m.connected : m.disconnected}, ${count}`;
  const panelId = `${id}-panel`;

  return (
    <div ref={root} className={props.className} data-herald-bell="">
      <button
        ref={bell}
        type="button"
        className={props.bellClassName}
        aria-label={label}
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-controls={open ? panelId : undefined}
        data-state={connected ? 'connected' : 'disconnected'}
        onClick={() => setOpen((o) => !o)}
      >
        <Bell
          aria-hidden="true"
          focusable="false"
          color={connected ? CONNECTED_COLOR : DISCONNECTED_COLOR}
        />
        {unread > 0 && (
          <span className={props.badgeClassName} aria-hidden="true" data-herald-badge="">
            {badgeText(unread, locale)}
          </span>
        )}
      </button>
      <span role="status" aria-live="polite" data-herald-live="" style={VISUALLY_HIDDEN}>
        {announcement}
      </span>
      {open && (
        <Dropdown
          id={panelId}
          items={snapshot.state.items}
          path={path}
          messages={m}
          renderItem={props.children}
          onClose={close}
          dropdownClassName={props.dropdownClassName}
          headerClassName={props.headerClassName}
          titleClassName={props.titleClassName}
          closeButtonClassName={props.closeButtonClassName}
          contentClassName={props.contentClassName}
          emptyStateClassName={props.emptyStateClassName}
          footerClassName={props.footerClassName}
          viewAllClassName={props.viewAllClassName}
          poweredByClassName={props.poweredByClassName}
          poweredByLinkClassName={props.poweredByLinkClassName}
          itemErrorClassName={props.itemErrorClassName}
          poweredByHref={props.poweredByHref}
        />
      )}
    </div>
  );
}

/** The live region is for screen readers only; hidden without any stylesheet (headless). */
const VISUALLY_HIDDEN = {
  position: 'absolute',
  width: 1,
  height: 1,
  margin: -1,
  padding: 0,
  overflow: 'hidden',
  clip: 'rect(0 0 0 0)',
  whiteSpace: 'nowrap',
  border: 0,
} as const;
