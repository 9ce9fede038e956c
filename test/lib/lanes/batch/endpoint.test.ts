/**
 * The batch lane sends a lane's text only to an endpoint approved for the lane's geography: a batch
 * client whose host is not refuses the whole submission before anything is stored or sent.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndpointNotApprovedError } from '../../../../lib/config/errors.js';
import { resolveLane } from '../../../../lib/config/lanes.js';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import { submitBatch, type SubmitBatchDeps } from '../../../../lib/lanes/batch/submit.js';

/** A dependency that fails the test when anything of it is used. */
function untouchable<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      throw new Error(`${what}.${String(property)} was used`);
    },
  });
}

describe('batch lane: approved endpoints', () => {
  it("an EU lane's batch for OpenAI's US host is refused before any document is stored or any part sent", async () => {
    // Prepare: the eu lane, and a batch client pointed at api.openai.com (as `--provider-base-url` could)
    const lane = resolveLane({ name: 'eu', region: 'eu-central-1' });
    const provider = createOpenAiBatchProvider({ apiKey: 'sk-test', baseUrl: 'https://api.openai.com/v1', timeoutMs: 1_000 });
    const deps: SubmitBatchDeps = {
      lane,
      provider,
      s3: untouchable('s3'),
      manifest: untouchable('manifest'),
      now: () => new Date('2026-12-05T10:00:00Z'),
    };

    // Act
    const submitting = submitBatch([{ text: 'Invoice INV-1 total 10.00 EUR', sourceId: 'src-1' }], deps);

    // Assess
    await assert.rejects(submitting, (error: unknown) => {
      assert.ok(error instanceof EndpointNotApprovedError);
      assert.equal(error.host, 'api.openai.com');
      assert.match(error.message, /lane eu .*api\.openai\.com processes in us/);
      return true;
    });
  });

  it("the default EU lane's batch client goes to OpenAI's European endpoint, never to one taken from the environment", () => {
    // Prepare
    const before = process.env.OPENAI_BASE_URL;
    process.env.OPENAI_BASE_URL = 'https://proxy.example.com/v1';
    try {
      // Act
      const fromDefault = createOpenAiBatchProvider({ apiKey: 'sk-test', timeoutMs: 1_000 });
      const fromLane = createOpenAiBatchProvider({
        apiKey: 'sk-test',
        baseUrl: resolveLane({ name: 'eu', region: 'eu-central-1' }).provider.baseUrl,
        timeoutMs: 1_000,
      });

      // Assess
      assert.equal(fromDefault.host, 'api.openai.com', "OpenAI's documented default, not the variable");
      assert.equal(fromLane.host, 'eu.api.openai.com');
    } finally {
      if (before === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = before;
    }
  });
});
