/**
 * A loopback proxy in front of DynamoDB Local or fauxqs that answers chosen operations with an AWS
 * error a given number of times (a throttle, a 5xx) and forwards everything else unchanged: the blips
 * real services have and the emulators never show. Operations are matched by the JSON protocols'
 * `X-Amz-Target` header (`DynamoDB_20120810.PutItem`, `AmazonSQS.SendMessage`).
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An injected error: the HTTP status and the AWS error type it carries. */
export interface InjectedError {
  status: number;
  type: string;
}

/** DynamoDB's throttling error (retryable by the SDK as a throttle). */
export const DYNAMODB_THROTTLED: InjectedError = { status: 400, type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException' };
/** DynamoDB's internal server error (a 5xx: transient for the SDK). */
export const DYNAMODB_5XX: InjectedError = { status: 500, type: 'com.amazonaws.dynamodb.v20120810#InternalServerError' };
/** SQS's internal error (a 5xx). */
export const SQS_5XX: InjectedError = { status: 500, type: 'com.amazonaws.sqs#InternalError' };

/** A running proxy. */
export interface FaultProxy {
  /** Where to point a client instead of the target. */
  endpoint: string;
  /** Answers the next calls of `operation` (its `X-Amz-Target` suffix, e.g. `PutItem`) with these errors, in order. */
  fail(operation: string, ...errors: InjectedError[]): void;
  /** How many calls of each operation were answered with an injected error. */
  readonly injected: Map<string, number>;
  /** How many calls of each operation reached the proxy (injected or forwarded). */
  readonly seen: Map<string, number>;
  stop(): Promise<void>;
}

/** Starts a proxy to `target` (an `http://host:port` endpoint) on a free loopback port. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const to = new URL(target);
  const queued = new Map<string, InjectedError[]>();
  const injected = new Map<string, number>();
  const seen = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      bump(seen, operation);
      const error = queued.get(operation)?.shift();
      if (error) {
        bump(injected, operation);
        res.writeHead(error.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'fault-proxy' });
        res.end(JSON.stringify({ __type: error.type, message: 'injected by the fault proxy' }));
        return;
      }
      const forward = httpRequest(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
        (upstream) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
        },
      );
      forward.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    fail: (operation, ...errors) => queued.set(operation, [...(queued.get(operation) ?? []), ...errors]),
    injected,
    seen,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
