/**
 * Where a lane's text is processed (`lib/config/endpoints.ts`): the model host its provider settings
 * give, approved for the lane's geography by its `modelEndpoints` or by where the host's operator
 * documents it processes; the synth refuses anything else, naming the lane, the host and what to change.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approvedEndpoints, endpointProblem, geographyOfRegion, modelEndpointHost } from '../../../lib/config/endpoints.js';
import { assertDeployable, DEFAULT_LANES, LaneConfigError, resolveLane } from '../../../lib/config/lanes.js';

describe('model endpoints', () => {
  it('the default EU lane calls OpenAI in the EU, the US lane OpenAI in the US: both approved', () => {
    // Act / Assess
    assert.equal(modelEndpointHost(DEFAULT_LANES.eu!), 'eu.api.openai.com');
    assert.equal(modelEndpointHost(DEFAULT_LANES.us!), 'api.openai.com');
    assert.deepEqual(approvedEndpoints(DEFAULT_LANES.eu!), [{ host: 'eu.api.openai.com', geography: 'eu' }]);
    assert.equal(endpointProblem(DEFAULT_LANES.eu!), undefined);
    assert.equal(endpointProblem(DEFAULT_LANES.us!), undefined);
  });

  it('refuses an EU lane pointed at the US, or at a host no one approved, naming the lane, the host and the fix', () => {
    // Prepare
    const toUs = resolveLane({ name: 'eu', region: 'eu-central-1', provider: { baseUrl: 'https://api.openai.com/v1' } });
    const unknown = resolveLane({ name: 'eu', region: 'eu-central-1', provider: { baseUrl: 'https://llm.example.com/v1' } });
    const attestedElsewhere = resolveLane({
      name: 'eu',
      region: 'eu-central-1',
      provider: { baseUrl: 'https://llm.example.com/v1' },
      modelEndpoints: [{ host: 'llm.example.com', geography: 'us' }],
    });
    // Act / Assess
    assert.match(
      endpointProblem(toUs)!,
      /^lane eu \(eu-central-1, geography eu\): its model endpoint api\.openai\.com processes in us \(as its operator documents\), not in the lane's geography: .*https:\/\/eu\.api\.openai\.com\/v1/,
    );
    assert.match(
      endpointProblem(unknown)!,
      /its model endpoint llm\.example\.com is not an approved endpoint of the lane \(modelEndpoints names none, .*\): .*modelEndpoints/,
    );
    assert.match(endpointProblem(attestedElsewhere)!, /llm\.example\.com processes in us \(as modelEndpoints says\), not in the lane's geography/);
    assert.throws(
      () => assertDeployable(toUs),
      (e: unknown) => e instanceof LaneConfigError && /lane eu cannot be deployed:[\s\S]*api\.openai\.com/.test(e.message),
    );
  });

  it("takes what the operator attests, and the documented homes of Bedrock's and Vertex AI's regional hosts", () => {
    // Prepare
    const azure = resolveLane({
      name: 'eu',
      region: 'eu-central-1',
      provider: { azure: { endpoint: 'https://contoso-eu.openai.azure.com', apiVersion: '2024-10-21', deployment: 'gpt-4o-mini' } },
      modelEndpoints: [{ host: 'contoso-eu.openai.azure.com', geography: 'eu', note: 'Azure OpenAI resource in Sweden Central, data zone EU' }],
    });
    const bedrock = resolveLane({ name: 'eu', region: 'eu-central-1', provider: { kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0' } });
    // Act / Assess
    assert.equal(endpointProblem(azure), undefined);
    assert.equal(modelEndpointHost(bedrock), 'bedrock-runtime.eu-central-1.amazonaws.com', 'a changed kind drops the base URL of the OpenAI one');
    assert.equal(endpointProblem(bedrock), undefined);
    assert.equal(
      endpointProblem({ ...bedrock, provider: { ...bedrock.provider, baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com' } })?.includes(
        'processes in us',
      ),
      true,
    );
    assert.equal(geographyOfRegion('ap-southeast-2'), 'ap');
    assert.equal(
      endpointProblem({ ...DEFAULT_LANES.eu!, provider: { ...DEFAULT_LANES.eu!.provider, baseUrl: 'http://127.0.0.1:4010/v1' } }),
      undefined,
      'a model on this machine stays in the lane',
    );
  });
});
