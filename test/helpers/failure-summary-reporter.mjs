/**
 * A Node.js test reporter that prints nothing while the suite runs and, at its end, one block naming every
 * failed test: its file, name and the first lines of its error, without Node.js's own stack frames (the
 * runner's line numbers are those of the transpiled file, so the stack is the place to look). `npm test` runs it after the TAP
 * reporter, so the last lines of a long CI log say what failed (CI records only the tail).
 * Suites that failed only because a test inside them failed are not repeated. A test file whose process
 * failed with no failed test inside it (its exit code: an error after its tests, the real-waits check's
 * report at exit) is shown with the last lines that process wrote to stderr, which say why.
 */
const ERROR_LINES = 12;
const STDERR_LINES = 20;

/** @param {unknown} error */
function describe(error) {
  if (!error || typeof error !== 'object') return String(error);
  const { cause, failureType } = /** @type {{ cause?: unknown, failureType?: string }} */ (error);
  const inner = failureType === 'testCodeFailure' && cause ? cause : error;
  const text = inner instanceof Error ? (inner.stack ?? `${inner.name}: ${inner.message}`) : String(inner);
  return text
    .split('\n')
    .filter((line) => !line.includes('(node:'))
    .slice(0, ERROR_LINES)
    .join('\n');
}

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* failureSummary(source) {
  const failures = [];
  /** @type {Map<string, string[]>} the last lines each test file's process wrote to stderr */
  const stderr = new Map();
  for await (const event of source) {
    if (event.type === 'test:stderr' && event.data.file) {
      const lines = [...(stderr.get(event.data.file) ?? []), ...String(event.data.message).split('\n').filter(Boolean)];
      stderr.set(event.data.file, lines.slice(-STDERR_LINES));
    }
    if (event.type !== 'test:fail') continue;
    const error = event.data.details?.error;
    if (error?.failureType === 'subtestsFailed') continue;
    failures.push(event.data);
  }
  if (failures.length === 0) {
    yield '# failed tests: none\n';
    return;
  }
  yield `# failed tests: ${failures.length}\n`;
  for (const failure of failures) {
    const where = failure.file ?? '(file unknown)';
    yield `# FAILED ${where} — ${failure.name}\n`;
    const error = failure.details?.error;
    const exited = error && typeof error === 'object' && error.exitCode !== undefined && error.exitCode !== null;
    const text = exited ? [describe(error), `its process's stderr, last lines:`, ...(stderr.get(where) ?? ['(none)'])].join('\n') : describe(error);
    yield `${text
      .split('\n')
      .map((line) => `#   ${line}`)
      .join('\n')}\n`;
  }
}
