/** The badge text: the count, or `99+` beyond 99, in the locale's digits. */
export function badgeText(unread: number, locale: string): string {
  const format = new Intl.NumberFormat(locale);
  return unread > 99 ? `${format.format(99)}+` : format.format(unread);
}
