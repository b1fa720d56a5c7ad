// With the quiet environment active, Nest's console logger (the default one and @nestjs/testing's
// TestingLogger both derive from it) and the console write to the environment's buffer.
const log = globalThis.__holdfastTestLog;
if (log) {
  const { ConsoleLogger } = require('@nestjs/common');
  const text = (value) =>
    value instanceof Error
      ? (value.stack ?? value.message)
      : typeof value === 'string'
        ? value
        : safeJson(value);
  ConsoleLogger.prototype.printMessages = function (messages, context, logLevel, _stream, errorStack) {
    const where = context ?? this.context;
    for (const message of messages) {
      log.push(`${String(logLevel).toUpperCase()}${where ? ` [${where}]` : ''} ${text(message)}`);
    }
    if (errorStack) log.push(text(errorStack));
  };
  ConsoleLogger.prototype.printStackTrace = function (stack) {
    if (stack) log.push(String(stack));
  };
  for (const method of ['log', 'info', 'warn', 'error', 'debug']) {
    console[method] = (...args) => log.push(`console.${method} ${args.map(text).join(' ')}`);
  }
}

function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
