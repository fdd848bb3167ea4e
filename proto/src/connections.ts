/**
 * The KV bucket every socket edge writes its per-pool socket counts to (`<pool>.<edgeId>` = the
 * count). A pool is `<account>` for Live keys and `<account>.test` for the Test key. The dashboard
 * reads it for "open connections now".
 */
export const CONNECTIONS_BUCKET = 'herald_connections';
