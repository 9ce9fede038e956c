/**
 * A recording stand-in for the AWS APIs the consumer calls that have no local emulator: Secrets
 * Manager `GetSecretValue` and SSM `GetParameter` (JSON 1.1 protocol, `X-Amz-Target`), EventBridge
 * Scheduler `CreateSchedule`/`ListSchedules`/`DeleteSchedule` and Lambda `UpdateEventSourceMapping`
 * (REST-JSON). One HTTP server on loopback answers all four (point each `AWS_ENDPOINT_URL_<SERVICE>`
 * at {@link AwsStub.endpoint}); every request is recorded in arrival order, with the region and
 * service it was signed for. Anything else answers 400 `UnknownOperationException` and is recorded
 * as service `unknown`, so a test can assert that nothing unexpected was called.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The services the stub answers. */
type StubService = 'secretsmanager' | 'ssm' | 'scheduler' | 'lambda' | 'unknown';

/** One request the stub received. */
export interface StubCall {
  service: StubService;
  /** The API operation (`GetSecretValue`, `CreateSchedule`, ...); the method and path when unknown. */
  operation: string;
  /** Region and service of the SigV4 credential scope (`undefined` when the request was not signed). */
  signedRegion: string | undefined;
  signedService: string | undefined;
  method: string;
  path: string;
  query: Record<string, string>;
  /** The JSON body (`{}` when empty), plus the path's name or UUID for REST calls (`Name`, `UUID`). */
  input: Record<string, unknown>;
  /** The HTTP status the stub answered. */
  status: number;
  at: number;
}

/** One schedule the stub holds (created and not deleted). */
interface StubSchedule {
  name: string;
  group: string;
  input: Record<string, unknown>;
}

/** A running stub. */
export interface AwsStub {
  /** `http://127.0.0.1:PORT`: the endpoint of every stubbed service. */
  readonly endpoint: string;
  /** Every request so far, in arrival order. */
  readonly calls: readonly StubCall[];
  /** The calls of one service (and operation). */
  callsOf(service: StubService, operation?: string): StubCall[];
  /** Sets what `GetSecretValue` answers for `secretId` (an ARN or a name): the `SecretString`, or not found. */
  setSecret(secretId: string, secretString: string | undefined): void;
  /** Sets what `GetParameter` answers for `name`. */
  setParameter(name: string, value: string | undefined): void;
  /** Event source mappings `UpdateEventSourceMapping` accepts, and their `Enabled` state. */
  addEventSourceMapping(uuid: string, enabled?: boolean): void;
  mappingEnabled(uuid: string): boolean | undefined;
  /** Schedules created and not deleted. */
  schedules(): StubSchedule[];
  /** Forgets every recorded call (state stays). */
  clearCalls(): void;
  /** Forgets every schedule (a newly deployed lane's schedule group is empty). */
  clearSchedules(): void;
  stop(): Promise<void>;
}

/** `SecretString` values a lane's provider-keys secret can hold. */
export const secretValues = {
  /** What `put-secret-value` stores: `{ "<key id>": "<api key>" }`. */
  keys: (keys: Readonly<Record<string, string>>): string => JSON.stringify(keys),
  /**
   * What a freshly deployed stack's secret holds before anyone put the keys: the password Secrets
   * Manager generates for a CDK `Secret` without a value (32 characters with punctuation; not JSON).
   */
  unset: (): string => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&()*+,-./:;<=>?@[]^_`{|}~';
    return Array.from(randomBytes(32), (b) => alphabet[b % alphabet.length]).join('');
  },
  /** JSON, but without the lane's key ids (a secret put for another lane, or with a typo). */
  malformed: (): string => JSON.stringify({ 'api-key': 'sk-not-the-key-id', note: 'keys go under their key ids' }),
} as const;

const JSON_1_1 = 'application/x-amz-json-1.1';
const REST_JSON = 'application/json';
const ACCOUNT = '000000000000';

class StubError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  const parsed: unknown = JSON.parse(text);
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { body: parsed };
}

/** Region and service from `Authorization: AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, ...`. */
function credentialScope(request: IncomingMessage): { region: string | undefined; service: string | undefined } {
  const match = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(request.headers.authorization ?? '');
  return { region: match?.[1], service: match?.[2] };
}

const epochSeconds = () => Math.floor(Date.now() / 1000);

/** Starts the stub on a free loopback port; `region` goes into the ARNs it answers with. */
export async function startAwsStub(options: { region?: string } = {}): Promise<AwsStub> {
  const region = options.region ?? 'us-east-1';
  const calls: StubCall[] = [];
  const secrets = new Map<string, string>();
  const parameters = new Map<string, string>();
  const mappings = new Map<string, boolean>();
  const schedules = new Map<string, StubSchedule>();

  const json11 = (target: string, body: Record<string, unknown>): { service: StubService; operation: string; output: unknown } => {
    const [prefix, operation = ''] = target.split('.');
    if (prefix === 'secretsmanager' && operation === 'GetSecretValue') {
      const id = String(body.SecretId ?? '');
      const value = secrets.get(id);
      if (value === undefined) throw new StubError(400, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
      const name = id.startsWith('arn:') ? id.split(':secret:')[1]?.replace(/-[A-Za-z0-9]{6}$/, '') : id;
      return {
        service: 'secretsmanager',
        operation,
        output: {
          ARN: id.startsWith('arn:') ? id : `arn:aws:secretsmanager:${region}:${ACCOUNT}:secret:${id}-AbCdEf`,
          Name: name,
          VersionId: 'stub-version',
          SecretString: value,
          VersionStages: ['AWSCURRENT'],
          CreatedDate: epochSeconds(),
        },
      };
    }
    if (prefix === 'AmazonSSM' && operation === 'GetParameter') {
      const name = String(body.Name ?? '');
      const value = parameters.get(name);
      if (value === undefined) throw new StubError(400, 'ParameterNotFound', `parameter ${name} not found`);
      return {
        service: 'ssm',
        operation,
        output: {
          Parameter: {
            Name: name,
            Type: 'String',
            Value: value,
            Version: 1,
            LastModifiedDate: epochSeconds(),
            ARN: `arn:aws:ssm:${region}:${ACCOUNT}:parameter${name.startsWith('/') ? '' : '/'}${name}`,
            DataType: 'text',
          },
        },
      };
    }
    throw new StubError(400, 'UnknownOperationException', `the stub does not answer ${target}`);
  };

  const restJson = (
    method: string,
    path: string,
    query: Record<string, string>,
    body: Record<string, unknown>,
  ): { service: StubService; operation: string; input: Record<string, unknown>; status: number; output: unknown } => {
    const schedule = /^\/schedules\/([^/]+)$/.exec(path);
    if (schedule) {
      const name = decodeURIComponent(schedule[1] ?? '');
      if (method === 'POST') {
        const group = String(body.GroupName ?? 'default');
        const key = `${group}/${name}`;
        const input = { ...body, Name: name };
        if (schedules.has(key)) throw Object.assign(new StubError(409, 'ConflictException', `schedule ${name} already exists`), { input });
        schedules.set(key, { name, group, input });
        return {
          service: 'scheduler',
          operation: 'CreateSchedule',
          input,
          status: 200,
          output: { ScheduleArn: `arn:aws:scheduler:${region}:${ACCOUNT}:schedule/${group}/${name}` },
        };
      }
      if (method === 'DELETE') {
        const group = query.groupName ?? 'default';
        const input = { ...body, Name: name, GroupName: group };
        if (!schedules.delete(`${group}/${name}`)) {
          throw Object.assign(new StubError(404, 'ResourceNotFoundException', `schedule ${name} does not exist`), { input });
        }
        return { service: 'scheduler', operation: 'DeleteSchedule', input, status: 200, output: {} };
      }
    }
    if (path === '/schedules' && method === 'GET') {
      const group = query.ScheduleGroup;
      const list = [...schedules.values()]
        .filter((s) => group === undefined || s.group === group)
        .filter((s) => query.NamePrefix === undefined || s.name.startsWith(query.NamePrefix))
        .map((s) => ({
          Arn: `arn:aws:scheduler:${region}:${ACCOUNT}:schedule/${s.group}/${s.name}`,
          Name: s.name,
          GroupName: s.group,
          State: 'ENABLED',
          CreationDate: epochSeconds(),
          LastModificationDate: epochSeconds(),
          Target: { Arn: String((s.input.Target as { Arn?: unknown } | undefined)?.Arn ?? '') },
        }));
      return { service: 'scheduler', operation: 'ListSchedules', input: { ...query }, status: 200, output: { Schedules: list } };
    }
    const mapping = /^\/2015-03-31\/event-source-mappings\/([^/]+)$/.exec(path);
    if (mapping && method === 'PUT') {
      const uuid = decodeURIComponent(mapping[1] ?? '');
      const input = { ...body, UUID: uuid };
      if (!mappings.has(uuid)) throw Object.assign(new StubError(404, 'ResourceNotFoundException', `event source mapping ${uuid} not found`), { input });
      const enabled = typeof body.Enabled === 'boolean' ? body.Enabled : (mappings.get(uuid) ?? true);
      mappings.set(uuid, enabled);
      return {
        service: 'lambda',
        operation: 'UpdateEventSourceMapping',
        input,
        status: 202,
        output: { UUID: uuid, State: enabled ? 'Enabling' : 'Disabling', LastModified: epochSeconds(), StateTransitionReason: 'USER_INITIATED' },
      };
    }
    throw new StubError(400, 'UnknownOperationException', `the stub does not answer ${method} ${path}`);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://stub');
    const method = request.method ?? 'GET';
    const query = Object.fromEntries(url.searchParams.entries());
    const scope = credentialScope(request);
    const target = request.headers['x-amz-target'];
    const base = { signedRegion: scope.region, signedService: scope.service, method, path: url.pathname, query, at: Date.now() };
    let body: Record<string, unknown> = {};
    const isJson11 = typeof target === 'string';
    try {
      body = await readBody(request);
      if (isJson11) {
        const { service, operation, output } = json11(target, body);
        calls.push({ ...base, service, operation, input: body, status: 200 });
        response.writeHead(200, { 'content-type': JSON_1_1 }).end(JSON.stringify(output));
      } else {
        const { service, operation, input, status, output } = restJson(method, url.pathname, query, body);
        calls.push({ ...base, service, operation, input, status });
        response.writeHead(status, { 'content-type': REST_JSON }).end(JSON.stringify(output));
      }
    } catch (error) {
      const e = error instanceof StubError ? error : new StubError(400, 'ValidationException', error instanceof Error ? error.message : String(error));
      const input = (e as StubError & { input?: Record<string, unknown> }).input ?? body;
      const known = e.type !== 'UnknownOperationException';
      const service: StubService = !known ? 'unknown' : isJson11 ? (target.startsWith('AmazonSSM') ? 'ssm' : 'secretsmanager') : guessRestService(url.pathname);
      const operation = isJson11 ? (target.split('.')[1] ?? target) : known ? restOperation(method, url.pathname) : `${method} ${url.pathname}`;
      calls.push({ ...base, service, operation, input, status: e.status });
      if (isJson11) {
        response.writeHead(e.status, { 'content-type': JSON_1_1 }).end(JSON.stringify({ __type: e.type, message: e.message }));
      } else {
        response.writeHead(e.status, { 'content-type': REST_JSON, 'x-amzn-errortype': e.type }).end(JSON.stringify({ message: e.message }));
      }
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    callsOf: (service, operation) => calls.filter((c) => c.service === service && (operation === undefined || c.operation === operation)),
    setSecret: (secretId, secretString) => {
      if (secretString === undefined) secrets.delete(secretId);
      else secrets.set(secretId, secretString);
    },
    setParameter: (name, value) => {
      if (value === undefined) parameters.delete(name);
      else parameters.set(name, value);
    },
    addEventSourceMapping: (uuid, enabled = true) => {
      mappings.set(uuid, enabled);
    },
    mappingEnabled: (uuid) => mappings.get(uuid),
    schedules: () => [...schedules.values()],
    clearCalls: () => {
      calls.length = 0;
    },
    clearSchedules: () => {
      schedules.clear();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function guessRestService(path: string): StubService {
  if (path.startsWith('/schedules')) return 'scheduler';
  if (path.startsWith('/2015-03-31/event-source-mappings')) return 'lambda';
  return 'unknown';
}

function restOperation(method: string, path: string): string {
  if (path.startsWith('/2015-03-31/event-source-mappings')) return 'UpdateEventSourceMapping';
  if (method === 'POST') return 'CreateSchedule';
  if (method === 'DELETE') return 'DeleteSchedule';
  return 'ListSchedules';
}
