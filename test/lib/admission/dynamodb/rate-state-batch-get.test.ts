/**
 * The rate-state adapter's cooldown read is one `BatchGetItem` (one round trip, not one per key):
 * keys DynamoDB leaves unprocessed are asked again, a few times, as AWS documents; keys still
 * unprocessed fail the read with the adapter's own error. A stand-in for the client, as the adapters'
 * error-mapping tests use: DynamoDB Local never leaves keys unprocessed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { cooldownPk, DynamoRateStateStore, RateStateUnavailableError } from '../../../../lib/admission/dynamodb/rate-state.js';

const TABLE = 'rate-test';
const KEYS = [
  { id: 'k1', quotaOwner: 'o1' },
  { id: 'k2', quotaOwner: 'o1' },
];

/** A client answering each `BatchGetItem` with the next of `answers` (the asked keys are recorded). */
function clientAnswering(answers: ((asked: string[]) => { found: string[]; unprocessed: string[] })[]) {
  const asked: string[][] = [];
  const client = {
    send: async (command: BatchGetItemCommand) => {
      const request = command.input.RequestItems?.[TABLE];
      assert.equal(request?.ConsistentRead, true, 'a strongly consistent read');
      const pks = (request?.Keys ?? []).map((k) => String(k.pk?.S));
      asked.push(pks);
      const answer = answers[asked.length - 1]!(pks);
      return {
        Responses: { [TABLE]: answer.found.map((pk) => marshall({ pk, reason: 'rate_limit', until: 5000 })) },
        ...(answer.unprocessed.length > 0
          ? { UnprocessedKeys: { [TABLE]: { Keys: answer.unprocessed.map((pk) => ({ pk: { S: pk } })), ConsistentRead: true } } }
          : {}),
      };
    },
  };
  return { client: client as unknown as DynamoDBClient, asked };
}

describe('DynamoRateStateStore: the cooldown read', () => {
  it('reads every key and owner in one BatchGetItem, and asks again for the keys left unprocessed', async () => {
    // Prepare: the first answer leaves the owner's key unprocessed
    const owner = cooldownPk('quota_owner', 'o1');
    const { client, asked } = clientAnswering([
      (pks) => ({ found: pks.filter((pk) => pk === cooldownPk('key', 'k1')), unprocessed: [owner] }),
      () => ({ found: [owner], unprocessed: [] }),
    ]);
    const store = new DynamoRateStateStore({ dynamodb: client, tableName: TABLE });
    // Act
    const snapshot = await store.readCooldowns(KEYS);
    // Assess
    assert.deepEqual(asked, [[cooldownPk('key', 'k1'), cooldownPk('key', 'k2'), owner], [owner]]);
    assert.deepEqual([...snapshot.keys.keys()], ['k1']);
    assert.deepEqual([...snapshot.owners.keys()], ['o1']);
  });

  it('fails with RateStateUnavailableError when keys stay unprocessed after three tries', async () => {
    // Prepare
    const stuck = (pks: string[]) => ({ found: [], unprocessed: pks });
    const { client, asked } = clientAnswering([stuck, stuck, stuck]);
    const store = new DynamoRateStateStore({ dynamodb: client, tableName: TABLE });
    // Act + Assess
    await assert.rejects(store.readCooldowns(KEYS), (error: unknown) => error instanceof RateStateUnavailableError && /BatchGetItem/.test(error.message));
    assert.equal(asked.length, 3);
  });
});
