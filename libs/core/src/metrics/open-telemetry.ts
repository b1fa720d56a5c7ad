/**
 * `@opentelemetry/api` is an optional peer of every lib: the application's own copy, loaded on
 * first use, so that an application without it still loads them. A second copy inside Holdfast
 * would record nothing: the API's global registry lives in the copy the SDK registered with.
 * Null without it. Each caller names the parts it reads (metrics, trace, context) as its type.
 */
let api: unknown;
let loaded = false;

export function openTelemetryApi<T>(): T | null {
  if (!loaded) {
    loaded = true;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require('@opentelemetry/api');
    } catch {
      api = null;
    }
  }
  return api as T | null;
}
