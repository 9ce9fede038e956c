import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LaneConfigError, providerDialect, providerNeedsKeySecrets, resolveLanes, type LaneConfig, type LaneOverride } from '../../../lib/config/lanes.js';
import { NoProviderKeyError } from '../../../lib/admission/keys/key-pool.js';
import { laneKeysVariable, loadLocalProviderKeys, PROVIDER_KEYS_FILE_VARIABLE } from '../../../workbench/local-stack/keys.js';
import { createModelAdapter } from '../../../lib/providers/index.js';

const AZURE = { endpoint: 'https://my-resource.openai.azure.com', deployment: 'gpt-4o-mini', apiVersion: '2024-10-21' };
const VERTEX = { project: 'my-project-123', location: 'europe-west4' };

type ProviderOverride = NonNullable<LaneOverride['provider']>;

function usLane(provider: ProviderOverride): LaneConfig {
  const lane = resolveLanes({ us: { provider } }).us;
  assert.ok(lane);
  return lane;
}

describe('lane provider config', () => {
  it('defaults to the openai dialect, IAM-free keys only where no secret is needed', () => {
    // Act
    const lane = usLane({});
    // Assess
    assert.equal(lane.provider.dialect, undefined);
    assert.equal(providerDialect(lane.provider), 'openai');
    assert.equal(providerNeedsKeySecrets(lane.provider), true);
  });

  it('takes a dialect for an OpenAI-compatible endpoint and passes it to the adapter', () => {
    // Act
    const lane = usLane({ dialect: 'groq', baseUrl: 'https://api.groq.com/openai/v1', model: 'llama-3.1-8b-instant' });
    // Assess
    assert.equal(providerDialect(lane.provider), 'groq');
    assert.equal(createModelAdapter(lane).provider, 'groq');
  });

  it('rejects an unknown dialect, and a dialect on a non-OpenAI-compatible kind', () => {
    assert.throws(() => usLane({ dialect: 'deepseek' as never }), LaneConfigError);
    assert.throws(() => usLane({ kind: 'anthropic', dialect: 'anthropic' }), /dialect applies only to kind openai-compatible/);
  });

  it('takes Azure settings with dialect azure-openai (implied when unset) and builds an Azure adapter', () => {
    // Act
    const implied = usLane({ azure: AZURE });
    const explicit = usLane({ azure: AZURE, dialect: 'azure-openai' });
    // Assess
    assert.equal(providerDialect(implied.provider), 'azure-openai');
    assert.equal(createModelAdapter(implied).provider, 'azure-openai');
    assert.deepEqual(explicit.provider.azure, AZURE);
  });

  it('rejects incoherent Azure settings', () => {
    assert.throws(() => usLane({ azure: AZURE, dialect: 'groq' }), /azure settings need dialect azure-openai/);
    assert.throws(() => usLane({ kind: 'gemini', azure: AZURE }), /azure applies only to kind openai-compatible/);
    assert.throws(() => usLane({ azure: AZURE, baseUrl: 'http://127.0.0.1:9' }), /mutually exclusive/);
    assert.throws(() => usLane({ azure: { ...AZURE, apiVersion: 'yesterday' } }), /apiVersion/);
    assert.throws(() => usLane({ azure: { ...AZURE, endpoint: 'not a url' } }), LaneConfigError);
    assert.throws(() => usLane({ azure: { ...AZURE, extra: 1 } as never }), LaneConfigError);
  });

  it('takes Vertex settings on a gemini lane: classified as vertex, no key secrets needed', () => {
    // Act
    const lane = usLane({ kind: 'gemini', model: 'gemini-2.5-flash', vertex: VERTEX });
    // Assess
    assert.equal(providerDialect(lane.provider), 'vertex');
    assert.equal(providerNeedsKeySecrets(lane.provider), false);
    assert.equal(createModelAdapter(lane).provider, 'vertex');
  });

  it('rejects Vertex settings on another kind or with a malformed location', () => {
    assert.throws(() => usLane({ vertex: VERTEX }), /vertex applies only to kind gemini/);
    assert.throws(() => usLane({ kind: 'gemini', vertex: { ...VERTEX, location: 'us-east-1' } }), /location/);
    assert.throws(() => usLane({ kind: 'gemini', vertex: { ...VERTEX, project: 'X' } }), /project/);
  });

  it('takes Bedrock auth: iam by default (no secret), api-key needs secrets; only on bedrock', () => {
    // Act
    const iam = usLane({ kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0' });
    const apiKey = usLane({ kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0', auth: 'api-key' });
    // Assess
    assert.equal(iam.provider.auth, undefined);
    assert.equal(providerNeedsKeySecrets(iam.provider), false);
    assert.equal(providerNeedsKeySecrets(apiKey.provider), true);
    assert.equal(createModelAdapter(apiKey).provider, 'bedrock');
    assert.throws(() => usLane({ auth: 'iam' }), /auth applies only to kind bedrock/);
    assert.throws(() => usLane({ kind: 'bedrock', auth: 'password' as never }), LaneConfigError);
  });

  it('drops the base lane kind-specific fields when an override changes the kind', () => {
    // Prepare
    const base = resolveLanes({ us: { provider: { azure: AZURE } } });
    // Act
    const switched = resolveLanes({ us: { provider: { kind: 'bedrock', model: 'amazon.nova-lite-v1:0' } } }, base);
    const kept = resolveLanes({ us: { provider: { model: 'gpt-4.1-mini' } } }, base);
    // Assess
    assert.equal(switched.us?.provider.azure, undefined);
    assert.equal(switched.us?.provider.kind, 'bedrock');
    assert.deepEqual(kept.us?.provider.azure, AZURE);
    assert.equal(kept.us?.provider.limits.requestsPerMinute, 500);
  });

  it('rejects unknown provider fields and duplicate key ids', () => {
    assert.throws(() => usLane({ region: 'x' } as never), LaneConfigError);
    assert.throws(
      () =>
        usLane({
          keys: [
            { id: 'k1', quotaOwner: 'o' },
            { id: 'k1', quotaOwner: 'o' },
          ],
        }),
      /duplicate key id k1/,
    );
  });
});

describe('loadLocalProviderKeys', () => {
  const lane = usLane({
    keys: [
      { id: 'key-1', quotaOwner: 'org-a' },
      { id: 'key-2', quotaOwner: 'org-b' },
    ],
  });

  it('reads the lane variable', () => {
    // Prepare
    const env = { [laneKeysVariable('us')]: JSON.stringify({ 'key-1': 'sk-one', 'key-2': 'sk-two', unused: 'sk-x' }) };
    // Act
    const keys = loadLocalProviderKeys(lane, env);
    // Assess
    assert.equal(laneKeysVariable('us'), 'RATELANE_US_PROVIDER_KEYS');
    assert.deepEqual(keys, [
      { id: 'key-1', quotaOwner: 'org-a', secret: 'sk-one' },
      { id: 'key-2', quotaOwner: 'org-b', secret: 'sk-two' },
    ]);
  });

  it('reads the keys file when the lane variable is unset, and prefers the variable', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-keys-'));
    const file = join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify({ us: { 'key-1': 'file-one', 'key-2': 'file-two' }, eu: { 'key-1': 'eu-one' } }));
    // Act
    const fromFile = loadLocalProviderKeys(lane, { [PROVIDER_KEYS_FILE_VARIABLE]: file });
    const fromVariable = loadLocalProviderKeys(lane, {
      [PROVIDER_KEYS_FILE_VARIABLE]: file,
      RATELANE_US_PROVIDER_KEYS: '{"key-1":"var-one","key-2":"var-two"}',
    });
    // Assess
    assert.deepEqual(
      fromFile.map((k) => k.secret),
      ['file-one', 'file-two'],
    );
    assert.deepEqual(
      fromVariable.map((k) => k.secret),
      ['var-one', 'var-two'],
    );
  });

  it('names missing key ids, never secrets', () => {
    // Prepare
    const env = { RATELANE_US_PROVIDER_KEYS: JSON.stringify({ 'key-1': 'sk-secret-value', 'key-2': '' }) };
    // Act
    const error = (() => {
      try {
        loadLocalProviderKeys(lane, env);
      } catch (e) {
        return e as Error;
      }
      return null;
    })();
    // Assess
    assert.ok(error instanceof NoProviderKeyError);
    assert.match(error.message, /no secret for key id\(s\): key-2/);
    assert.doesNotMatch(error.message, /sk-secret-value/);
  });

  it('fails clearly without a source, on malformed JSON (not echoed), a missing file or lane section', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-keys-'));
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ eu: { 'key-1': 'x' } }));
    // Act + Assess
    assert.throws(() => loadLocalProviderKeys(lane, {}), /set RATELANE_US_PROVIDER_KEYS .* or RATELANE_PROVIDER_KEYS_FILE/);
    assert.throws(
      () => loadLocalProviderKeys(lane, { RATELANE_US_PROVIDER_KEYS: '{"key-1": "sk-leak' }),
      (e: Error) => e instanceof NoProviderKeyError && /not valid JSON/.test(e.message) && !e.message.includes('sk-leak'),
    );
    assert.throws(() => loadLocalProviderKeys(lane, { RATELANE_US_PROVIDER_KEYS: '["sk"]' }), /must be a JSON object/);
    assert.throws(() => loadLocalProviderKeys(lane, { RATELANE_US_PROVIDER_KEYS: '{"key-1": 5, "key-2": "b"}' }), /key-1 is not a string/);
    assert.throws(() => loadLocalProviderKeys(lane, { [PROVIDER_KEYS_FILE_VARIABLE]: join(dir, 'absent.json') }), /cannot read .*ENOENT/);
    assert.throws(() => loadLocalProviderKeys(lane, { [PROVIDER_KEYS_FILE_VARIABLE]: other }), /no "us" section/);
  });

  it('needs no secret for Bedrock with IAM auth or Vertex', () => {
    // Prepare
    const bedrock = usLane({ kind: 'bedrock', model: 'amazon.nova-lite-v1:0' });
    const vertex = usLane({ kind: 'gemini', model: 'gemini-2.5-flash', vertex: VERTEX });
    // Act + Assess
    assert.deepEqual(loadLocalProviderKeys(bedrock, {}), [{ id: 'key-1', quotaOwner: 'us-org', secret: '' }]);
    assert.deepEqual(
      loadLocalProviderKeys(vertex, {}).map((k) => k.id),
      ['key-1'],
    );
    const apiKeyLane = usLane({ kind: 'bedrock', model: 'amazon.nova-lite-v1:0', auth: 'api-key' });
    assert.throws(() => loadLocalProviderKeys(apiKeyLane, {}), NoProviderKeyError);
    assert.deepEqual(loadLocalProviderKeys(apiKeyLane, { RATELANE_US_PROVIDER_KEYS: '{"key-1":"bedrock-key"}' })[0]?.secret, 'bedrock-key');
  });
});

describe('local provider keys are checked as the lane secret is', () => {
  it('trims a trailing newline and refuses a control character inside a key, naming the id only', () => {
    // Prepare
    const lane = resolveLanes({}).us!;
    const ids = lane.provider.keys.map((k) => k.id);
    const values = (make: (id: string) => string) => JSON.stringify(Object.fromEntries(ids.map((id) => [id, make(id)])));
    // Act
    const trimmed = loadLocalProviderKeys(lane, { RATELANE_US_PROVIDER_KEYS: values((id) => `sk-${id}\n`) });
    const refused = () => loadLocalProviderKeys(lane, { RATELANE_US_PROVIDER_KEYS: values((id) => `sk-${id}\u0007bell`) });
    // Assess
    assert.deepEqual(
      trimmed.map((k) => k.secret),
      ids.map((id) => `sk-${id}`),
    );
    assert.throws(refused, (e: Error) => e instanceof NoProviderKeyError && /control character/.test(e.message) && !e.message.includes('bell'));
  });
});
