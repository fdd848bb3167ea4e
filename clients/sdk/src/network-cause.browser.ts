/**
 * The browser and React Native build: their fetch and WebSocket never say why a connection failed
 * (a bare `TypeError`, an error event without details), so there is no cause to name and the
 * callers keep their generic text. Node's build explains (network-cause.ts).
 */
export async function explainNetworkFailure(
  _url: string,
  _err: unknown,
  _fetchImpl: typeof fetch | undefined,
): Promise<string | undefined> {
  return undefined;
}
