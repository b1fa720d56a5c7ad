/**
 * The one shape of a Holdfast health indicator. Each lib's `XHealthIndicator.isHealthy(key)`
 * returns `{ [key]: { status: 'up' | 'down', ...details } }`: the `HealthIndicatorResult` that
 * `@nestjs/terminus`'s `HealthCheckService.check([...])` reads (a `down` status fails the check),
 * built without loading terminus, which stays an optional peer.
 */
export type HealthStatus = 'up' | 'down';

export type HealthResult<Key extends string = string> = Record<
  Key,
  { status: HealthStatus } & Record<string, unknown>
>;

export function healthResult<Key extends string>(
  key: Key,
  status: HealthStatus,
  details: Record<string, unknown> = {},
): HealthResult<Key> {
  return { [key]: { ...details, status } } as HealthResult<Key>;
}

/** Runs `probe`; `up` with its details, or `down` with the details and the error's message. */
export async function probeHealth<Key extends string>(
  key: Key,
  details: Record<string, unknown>,
  probe: () => Promise<Record<string, unknown> | void>,
): Promise<HealthResult<Key>> {
  try {
    return healthResult(key, 'up', { ...details, ...((await probe()) ?? {}) });
  } catch (error) {
    return healthResult(key, 'down', {
      ...details,
      message: error instanceof Error ? error.message : String(error),
    });
  }
}
