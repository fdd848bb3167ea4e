/** The bell's texts in one language. */
export interface Messages {
  title: string;
  close: string;
  empty: string;
  viewAll: string;
  poweredBy: string;
  connected: string;
  disconnected: string;
  unread: (count: string) => string;
  noUnread: string;
  announce: (count: number, formatted: string) => string;
  itemError: string;
}

const en: Messages = {
  title: 'Notifications',
  close: 'Close notifications',
  empty: 'No notifications yet',
  viewAll: 'View all',
  poweredBy: 'Powered by',
  connected: 'connected',
  disconnected: 'disconnected',
  unread: (n) => `${n} unread`,
  noUnread: 'no unread',
  announce: (n, f) => (n === 1 ? 'New notification' : `${f} new notifications`),
  itemError: 'This notification cannot be shown',
};

const fr: Messages = {
  title: 'Notifications',
  close: 'Fermer les notifications',
  empty: 'Aucune notification',
  viewAll: 'Tout voir',
  poweredBy: 'Propulsé par',
  connected: 'connecté',
  disconnected: 'déconnecté',
  unread: (n) => `${n} non lues`,
  noUnread: 'aucune non lue',
  announce: (n, f) => (n === 1 ? 'Nouvelle notification' : `${f} nouvelles notifications`),
  itemError: 'Cette notification ne peut pas être affichée',
};

const sw: Messages = {
  title: 'Arifa',
  close: 'Funga arifa',
  empty: 'Hakuna arifa bado',
  viewAll: 'Tazama zote',
  poweredBy: 'Inaendeshwa na',
  connected: 'imeunganishwa',
  disconnected: 'haijaunganishwa',
  unread: (n) => `${n} hazijasomwa`,
  noUnread: 'hakuna ambazo hazijasomwa',
  announce: (n, f) => (n === 1 ? 'Arifa mpya' : `Arifa mpya ${f}`),
  itemError: 'Arifa hii haiwezi kuonyeshwa',
};

const CATALOGUE: Record<string, Messages> = { en, fr, sw };

/** The texts for `locale` (`fr-CA` falls back to `fr`), English when the language is unknown. */
export function messagesFor(locale: string): Messages {
  return CATALOGUE[locale] ?? CATALOGUE[locale.split('-')[0] ?? ''] ?? en;
}
