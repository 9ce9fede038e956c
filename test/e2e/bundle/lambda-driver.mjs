// Runs a synthesized consumer bundle the way the Lambda Node.js runtime does, in its own process:
// loads `<LAMBDA_TASK_ROOT>/<module>.mjs` named by `_HANDLER` (`index.handler`), calls the handler
// once with the event read from stdin, and prints the outcome as one line
// `RATELANE_DRIVER_RESULT {"ok":true,"response":...}` (or `{"ok":false,"error":{...}}` when the
// handler throws, which Lambda reports as a failed invocation). Everything else on stdout is the
// function's own output (Powertools logs and EMF metrics, as CloudWatch Logs would get them).
//
// Plain JavaScript on purpose: no TypeScript loader in the process that runs the artifact. The
// environment is the function's (the caller sets it); the only thing added here is name resolution
// for `*.localhost` (fauxqs queue URLs are `http://sqs.<region>.localhost:PORT/...`, and the SDK
// sends SQS calls to the queue URL's host), as resolvers that follow RFC 6761 do.
import dns from 'node:dns';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const lookup = dns.lookup;
dns.lookup = function localhostLookup(hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'object' && options !== null ? options : {};
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if (opts.all) return process.nextTick(cb, null, [{ address: '127.0.0.1', family: 4 }]);
    return process.nextTick(cb, null, '127.0.0.1', 4);
  }
  return lookup.call(this, hostname, options, callback);
};

const MARK = 'RATELANE_DRIVER_RESULT ';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const { event, context: ctx } = await readStdin();
const root = process.env.LAMBDA_TASK_ROOT;
const [moduleName, exportName] = (process.env._HANDLER ?? '').split('.');
if (!root || !moduleName || !exportName) {
  process.stdout.write(`${MARK}${JSON.stringify({ ok: false, error: { name: 'DriverError', message: 'LAMBDA_TASK_ROOT and _HANDLER must be set' } })}\n`);
  process.exit(1);
}

const started = Date.now();
const deadline = started + ctx.timeoutMs;
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: ctx.functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: ctx.invokedFunctionArn,
  memoryLimitInMB: String(ctx.memoryLimitInMB),
  awsRequestId: ctx.awsRequestId,
  logGroupName: ctx.logGroupName,
  logStreamName: ctx.logStreamName,
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => {
    throw new Error('context.done() is not supported');
  },
  fail: () => {
    throw new Error('context.fail() is not supported');
  },
  succeed: () => {
    throw new Error('context.succeed() is not supported');
  },
};

let result;
try {
  const mod = await import(pathToFileURL(join(root, `${moduleName}.mjs`)).href);
  if (typeof mod[exportName] !== 'function') throw new Error(`${moduleName}.mjs does not export a function ${exportName}`);
  const response = await mod[exportName](event, context);
  result = { ok: true, response, ms: Date.now() - started };
} catch (error) {
  result = { ok: false, error: { name: error?.name, message: String(error?.message ?? error) }, ms: Date.now() - started };
}
// Like Lambda freezing the environment: whatever sockets or timers remain do not keep it alive.
process.stdout.write(`${MARK}${JSON.stringify(result)}\n`, () => process.exit(0));
