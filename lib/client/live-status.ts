/**
 * A job's state read through the lane's live API (`GET /v1/extractions/{jobId}`, IAM auth), signed with
 * SigV4 for `execute-api` in the lane's region: the read a tenant makes of its own jobs — the API answers
 * the job to its owner (and the lane's readers) only, and to anyone else as a job never seen.
 */
import { createHash } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, Checksum, SourceData } from '@smithy/types';
import { timeoutSignal } from '../platform/abort-scope.js';
import type { JobStatusView } from '../store/job-status.js';

/** SHA-256 for the signer, from node:crypto. */
class NodeSha256 implements Checksum {
  private hash = createHash('sha256');
  update(data: SourceData): void {
    this.hash.update(typeof data === 'string' ? data : Buffer.from(data as ArrayBuffer));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = createHash('sha256');
  }
}

/** What a live status read ended in, for the client to raise. */
export type LiveStatusFailure = { kind: 'forbidden' | 'unavailable'; status: number; detail: string };

/** How long one read may take (ms). */
const READ_TIMEOUT_MS = 10_000;

/**
 * The state of `jobId` as the live API at `baseUrl` answers it to the signing principal, or the failure
 * (403: the principal may not call the API; another status or no answer: unavailable).
 */
export async function liveStatus(input: {
  baseUrl: string;
  jobId: string;
  region: string;
  credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
}): Promise<{ view: JobStatusView } | { failure: LiveStatusFailure }> {
  const url = new URL(`v1/extractions/${encodeURIComponent(input.jobId)}`, input.baseUrl.endsWith('/') ? input.baseUrl : `${input.baseUrl}/`);
  const signer = new SignatureV4({ service: 'execute-api', region: input.region, credentials: input.credentials, sha256: NodeSha256 });
  const signed = await signer.sign({
    method: 'GET',
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: {},
    headers: { host: url.host },
  });
  const { host: _host, ...headers } = signed.headers;
  const limit = timeoutSignal(READ_TIMEOUT_MS);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { headers, signal: limit.signal });
    text = await response.text();
  } catch (error) {
    return { failure: { kind: 'unavailable', status: 0, detail: error instanceof Error ? error.message : String(error) } };
  } finally {
    limit.clear();
  }
  if (response.status === 200 || response.status === 404) {
    const { status, code: _code, ...rest } = JSON.parse(text) as { status: string; code?: string } & Record<string, unknown>;
    return { view: { ...rest, state: status } as unknown as JobStatusView };
  }
  const kind = response.status === 403 ? 'forbidden' : 'unavailable';
  return { failure: { kind, status: response.status, detail: text.slice(0, 200) } };
}
