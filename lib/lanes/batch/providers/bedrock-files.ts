/**
 * The lines of erased records in the batch files the lane's bucket holds: Bedrock batch inference reads
 * its input from `batch/<batchId>/input/*.jsonl` and writes `batch/<batchId>/output/…/*.jsonl.out`, each line
 * a JSON object with the record's `recordId` (its text, and its answer, derived from the text). Each such
 * file under a prefix is rewritten without those records; a file with none of them is left as it is.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** The largest batch file rewritten in memory; a larger one is reported, not rewritten. */
const MAX_REWRITE_BYTES = 512 * 1024 * 1024;

/** What removing a source's records from a batch's files did. */
export interface BatchFilesErased {
  batchId: string;
  /** Files rewritten without the source's records. */
  filesRewritten: string[];
  /** Lines removed across them. */
  linesRemoved: number;
  /** Files too large to rewrite here (over 512 MiB): their lines stay until the lifecycle rule removes them. */
  tooLarge: string[];
}

/** The record id of a JSONL line, or `undefined` for a line that is not a JSON object with one. */
function recordIdOfLine(line: string): string | undefined {
  try {
    const value = JSON.parse(line) as { recordId?: unknown };
    return typeof value?.recordId === 'string' ? value.recordId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Rewrites every JSONL file of batch `batchId` under `prefix` (the batch's `batch/<batchId>/`, or its output
 * folder) in `bucket` without the lines of `recordIds`.
 *
 * @throws what S3 throws (the caller reports it; running it again finishes it)
 */
export async function eraseBatchFileLines(
  s3: S3Client,
  location: { bucket: string; batchId: string; prefix: string },
  recordIds: ReadonlySet<string>,
): Promise<BatchFilesErased> {
  const { bucket, batchId, prefix } = location;
  const erased: BatchFilesErased = { batchId, filesRewritten: [], linesRemoved: 0, tooLarge: [] };
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      const key = object.Key;
      if (!key || !/\.jsonl(\.out)?$/.test(key)) continue;
      if ((object.Size ?? 0) > MAX_REWRITE_BYTES) {
        erased.tooLarge.push(key);
        continue;
      }
      const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body?.transformToString('utf8');
      if (body === undefined) continue;
      const lines = body.split('\n');
      const kept = lines.filter((line) => {
        const id = line.trim() === '' ? undefined : recordIdOfLine(line);
        return id === undefined || !recordIds.has(id);
      });
      const removed = lines.length - kept.length;
      if (removed === 0) continue;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: kept.join('\n'), ContentType: 'application/jsonl' }));
      erased.filesRewritten.push(key);
      erased.linesRemoved += removed;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return erased;
}
