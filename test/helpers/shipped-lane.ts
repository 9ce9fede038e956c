/**
 * A lane from a synthesized template's own lane config, under unique resource names and with the
 * provider at `baseUrl`, provisioned on the test run's local services — what every shipped-bundle test
 * deploys its function's environment onto.
 */
import { randomBytes } from 'node:crypto';
import { createAwsClients } from '../../lib/platform/clients.js';
import { LaneConfigSchema, type LaneConfig } from '../../lib/config/lanes.js';
import { provisionLane } from '../../workbench/local-stack/services/provision.js';
import { testEndpoints, uniqueLaneResources } from './endpoints.js';

/** The account the shipped-bundle tests resolve the template's ARNs in. */
export const SHIPPED_ACCOUNT = '000000000000';

/** A provisioned copy of the template's lane, and the ARN its provider secret would have. */
export async function provisionTemplateLane(templateLane: LaneConfig, baseUrl: string) {
  const lane = LaneConfigSchema.parse({
    ...templateLane,
    resources: { ...templateLane.resources, ...uniqueLaneResources() },
    provider: { ...templateLane.provider, baseUrl },
  });
  const endpoints = testEndpoints();
  const clients = createAwsClients(lane.region, endpoints);
  const provisioned = await provisionLane(lane, clients);
  const secretArn = `arn:aws:secretsmanager:${lane.region}:${SHIPPED_ACCOUNT}:secret:${lane.resources.providerSecretName}-${randomBytes(3).toString('hex')}`;
  return { lane, endpoints, clients, provisioned, secretArn };
}
