/**
 * An absolute file path (POSIX or Windows) that starts a line or follows a space, a quote or an
 * opening parenthesis, as stack frames and Node's file errors print them; a URL's `//` follows a
 * colon and is left alone. The last segment (the file name, with its :line:col) is kept.
 */
const ABSOLUTE_PATH = /(^|[\s('"])(?:[A-Za-z]:)?[\\/](?:[^\s:()'"\\/]+[\\/])+(?=[^\s()'"\\/])/gm;

/**
 * What the dashboard shows of an error text when the application has not opted in to details:
 * its first line (a stored stack trace's frames stay in the database) with absolute paths cut to
 * their file names, so the page tells no one where the application is deployed.
 */
export function errorSummary(text: string): string {
  const firstLine = text.split('\n', 1)[0].trimEnd();
  return firstLine.replace(ABSOLUTE_PATH, '$1');
}

/** The error text to show: as stored with `errorDetails`, else its summary. */
export function shownError(text: string, details: boolean): string;
export function shownError(text: string | null | undefined, details: boolean): string | null;
export function shownError(text: string | null | undefined, details: boolean): string | null {
  if (text === null || text === undefined) return null;
  return details ? text : errorSummary(text);
}
