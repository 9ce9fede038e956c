/**
 * The residency map's shape: for each lane, every place a job's bytes (or anything derived from them)
 * go, with its region, encryption and retention as the synthesized templates say, and what lies outside
 * the lane's geography. `ratelane residency --json` prints a {@link ResidencyMap}; the text table and the
 * HTML page show the same.
 */

/**
 * What kind of place:
 * - `bucket`: an S3 bucket (the documents; the access-log bucket);
 * - `queue`, `dead-letter-queue`: SQS queues (job messages: a reference to the document, never its text);
 * - `table`: a DynamoDB table (or one replica of a global table); `table-backups`: its point-in-time backups;
 * - `log-group`: a CloudWatch Logs group (a function's logs, an API's access logs);
 * - `metrics`: CloudWatch metrics (counts and durations: no text);
 * - `model-endpoint`: the host the model calls go to, and the geography it processes in;
 * - `batch-files`: the batch lane's input and output files (a bucket prefix, or the batch provider's files);
 * - `review`: where jobs that need a person are recorded and read;
 * - `stack`: the lane's stack itself (a synth refusal that names no other place).
 */
export type PlaceKind =
  | 'bucket'
  | 'queue'
  | 'dead-letter-queue'
  | 'table'
  | 'table-backups'
  | 'log-group'
  | 'metrics'
  | 'model-endpoint'
  | 'batch-files'
  | 'review'
  | 'stack';

/** One place a lane's job data goes. */
export interface ResidencyPlace {
  kind: PlaceKind;
  /** The resource's name (`${AWS::AccountId}` where the template leaves it to the deploy), or a description. */
  name: string;
  /** The CloudFormation logical id, when the place is one resource of the template. */
  logicalId: string | null;
  /** What of a job it holds (or that it holds no text). */
  holds: string;
  /** The AWS region, when one is known (a model host outside AWS has none: see `geography`). */
  region: string | null;
  /** The geography it is in (`eu`, `us`, ...): its region's, or the one the model endpoint processes in; null when unknown. */
  geography: string | null;
  /** Encryption at rest (or in transit, for an endpoint), as the template sets it. */
  encryption: string;
  /** How long it keeps what it holds, as the template sets it. */
  retention: string;
  /** Whether it is inside the lane's geography (false when its geography cannot be determined). */
  inLaneGeography: boolean;
}

/** A place outside the lane's geography, or whose region cannot be determined, and why. */
export interface ResidencyFlag {
  kind: PlaceKind;
  name: string;
  why: string;
}

/** Where the templates of a lane came from: an in-process synth, an existing cdk.out, or only the lane config (the synth refused it). */
export type ResidencySource = 'synth' | 'cdk-out' | 'config';

/** One lane's map. */
export interface LaneResidency {
  lane: string;
  /** The lane's region (its config's). */
  region: string;
  /** The lane's geography: its region's prefix. */
  geography: string;
  /** The lane's stack name, when it has a template. */
  stack: string | null;
  source: ResidencySource;
  /** Why `cdk synth` refused the lane (the places then come from the config), else null. */
  synthRefusal: string | null;
  places: ResidencyPlace[];
  /** The places outside the lane's geography (empty when everything stays in it). */
  flagged: ResidencyFlag[];
}

/**
 * The residency map (`ratelane residency --json`):
 *
 * ```json
 * { "lanes": [ { "lane": "eu", "region": "eu-central-1", "geography": "eu", "stack": "ratelane-eu", "source": "synth",
 *     "synthRefusal": null,
 *     "places": [ { "kind": "bucket", "name": "ratelane-eu-source-${AWS::AccountId}-eu-central-1", "logicalId": "StorageSource42D3DA3E",
 *                   "holds": "…", "region": "eu-central-1", "geography": "eu", "encryption": "SSE-S3 (AES-256, S3-managed keys)",
 *                   "retention": "documents/: expire after 90 d; …", "inLaneGeography": true }, … ],
 *     "flagged": [] } ] }
 * ```
 */
export interface ResidencyMap {
  lanes: LaneResidency[];
}
