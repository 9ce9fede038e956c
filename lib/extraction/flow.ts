/**
 * The flow a job's calls belong to when a binding quota is shared (`admission/bucket/flows.ts`): its
 * priority class and its tenant, weighted by the lane's `fairness` config.
 */
import type { Flow } from '../admission/model/bucket.js';
import type { LaneConfig } from '../config/lanes.js';
import { jobFlowId, type Job } from '../contract/job.js';

/**
 * `job`'s flow: its id `jobFlowId` (also its messages' `MessageGroupId`); its weight the class's times
 * the tenant's (the default tenant weight for a tenant not named, or no tenant).
 */
export function flowOf(job: Pick<Job, 'tenant' | 'priority'>, fairness: LaneConfig['fairness']): Flow {
  const priority = job.priority ?? 'bulk';
  const tenantWeight = job.tenant === undefined ? fairness.defaultTenantWeight : (fairness.tenantWeights[job.tenant] ?? fairness.defaultTenantWeight);
  return {
    id: jobFlowId(job),
    weight: fairness.classWeights[priority] * tenantWeight,
  };
}
