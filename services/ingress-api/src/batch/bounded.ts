/**
 * Maps `items` through `fn` with at most `limit` calls in flight, keeping the results in the
 * items' order. Many small NATS round trips then overlap on one connection instead of running one
 * after another, while a huge batch cannot flood the connection with thousands at once.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
