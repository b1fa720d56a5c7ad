import { errorSummary, shownError } from '../src/error-text';

describe('errorSummary', () => {
  it('keeps the first line and cuts absolute paths to their file names', () => {
    const stack = [
      "Error: EACCES: permission denied, open '/home/deploy/app/.env'",
      '    at Object.openSync (node:fs:573:18)',
      '    at Handler.run (/home/deploy/app/dist/handler.js:12:9)',
    ].join('\n');
    expect(errorSummary(stack)).toBe("Error: EACCES: permission denied, open '.env'");
    expect(errorSummary('at (/opt/app/dist/main.js:1:2) and C:\\srv\\app\\main.js:3:4')).toBe(
      'at (main.js:1:2) and main.js:3:4',
    );
  });

  it('leaves URLs, relative paths and a message without a path as they are', () => {
    expect(errorSummary('connect ECONNREFUSED postgres://db.internal:5432/app')).toBe(
      'connect ECONNREFUSED postgres://db.internal:5432/app',
    );
    expect(errorSummary('see docs/inbox.md and a/b')).toBe('see docs/inbox.md and a/b');
    expect(errorSummary('quotes upstream is down')).toBe('quotes upstream is down');
  });

  it('shows the text whole when details are asked for, and null as null', () => {
    expect(shownError('a\n    at /x/y.js:1:1', true)).toBe('a\n    at /x/y.js:1:1');
    expect(shownError(null, false)).toBeNull();
  });
});
