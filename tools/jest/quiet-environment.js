// Jest environment for this repository: test output stays silent unless a test fails.
// Nest log lines, console output and forked workers' output (see quiet-setup.js and forkTs) go
// to a bounded buffer; when a test or a hook fails, the buffer is written to stderr after it.
// HOLDFAST_TEST_VERBOSE=1 turns the buffering off.
const { TestEnvironment } = require('jest-environment-node');

const KEEP_LINES = 400;

class QuietEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    if (process.env.HOLDFAST_TEST_VERBOSE === '1') return;
    const lines = [];
    let dropped = 0;
    this.buffer = {
      lines,
      push(line) {
        lines.push(line);
        if (lines.length > KEEP_LINES) {
          lines.splice(0, lines.length - KEEP_LINES);
          dropped++;
        }
      },
      take() {
        const out = { dropped, lines: lines.splice(0) };
        dropped = 0;
        return out;
      },
    };
    this.global.__holdfastTestLog = this.buffer;
  }

  flush(title) {
    if (!this.buffer) return;
    const { dropped, lines } = this.buffer.take();
    if (!lines.length) return;
    process.stderr.write(
      `\n--- output before the failure of "${title}" (${this.testPath})` +
        `${dropped ? `, the last ${lines.length} lines` : ''} ---\n${lines.join('\n')}\n--- end ---\n`,
    );
  }

  async handleTestEvent(event) {
    if (event.name === 'test_done' && event.test.errors.length > 0) this.flush(fullName(event.test));
    if (event.name === 'hook_failure') this.flush(`${event.hook.type} hook`);
  }
}

function fullName(test) {
  const names = [];
  for (let t = test; t && t.name !== 'ROOT_DESCRIBE_BLOCK'; t = t.parent) names.unshift(t.name);
  return names.join(' › ');
}

module.exports = QuietEnvironment;
