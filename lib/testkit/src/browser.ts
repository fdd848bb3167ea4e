/**
 * How browser tests launch Debian's chromium through playwright-core (which each client package
 * depends on itself): `chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })`.
 * No playwright import here, so the kit needs no browser dependency.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // The stack's (and a page server's) throwaway CAs are unknown to the browser.
  '--ignore-certificate-errors',
];
