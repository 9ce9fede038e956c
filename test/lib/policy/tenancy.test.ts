/**
 * Who may state a job's tenant (`lib/policy/tenancy.ts`): the lane's own senders, or a producer the
 * lane grants the tenant; SQS names a role's sender by the role's unique id and the session.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mayStatePriority, mayStateTenant, senderPrincipalId } from '../../../lib/policy/index.js';

const grants = [
  { senderId: 'AROAPRODUCERA00000001', tenants: ['team-a', 'team-b'] },
  { senderId: 'AIDAPLATFORMUSER00001', tenants: ['*'] },
  { senderId: 'AROAURGENTPRODUCER001', priorities: ['urgent'] },
];
const laneSenders = ['AROALANECONSUMER00001'];

describe('tenancy: who may state a tenant', () => {
  it("names a role's sender by the role's unique id, whatever the session", () => {
    assert.equal(senderPrincipalId('AROAPRODUCERA00000001:i-0abc'), 'AROAPRODUCERA00000001');
    assert.equal(senderPrincipalId('AIDAPLATFORMUSER00001'), 'AIDAPLATFORMUSER00001');
    assert.equal(senderPrincipalId('123456789012'), '123456789012');
  });

  it('believes a granted tenant, any tenant from a "*" grant and any from the lane itself; nothing else', () => {
    // Prepare
    const asks = (senderId: string | undefined, tenant: string) => mayStateTenant({ tenant, senderId, laneSenders, grants });
    // Act / Assess
    assert.equal(asks('AROAPRODUCERA00000001:svc', 'team-b'), true);
    assert.equal(asks('AROAPRODUCERA00000001:svc', 'team-c'), false, 'a tenant its grant does not name');
    assert.equal(asks('AIDAPLATFORMUSER00001', 'anyone'), true);
    assert.equal(asks('AROALANECONSUMER00001:ratelane-us-consumer', 'team-z'), true, "the lane's own re-send");
    assert.equal(asks('AROASTRANGER000000001:svc', 'team-a'), false);
    assert.equal(asks('AROAPRODUCERA00000001X:svc', 'team-a'), false, 'a unique id is compared whole');
    assert.equal(asks(undefined, 'team-a'), false);
    assert.equal(asks('', 'team-a'), false);
    assert.equal(mayStateTenant({ tenant: 'team-a', senderId: 'AROAPRODUCERA00000001:svc', laneSenders: [], grants: [] }), false, 'no grants: no one');
  });

  it('believes urgent from a grant naming it and from the lane itself; bulk from anyone', () => {
    // Prepare
    const asks = (senderId: string | undefined, priority: string) => mayStatePriority({ priority, senderId, laneSenders, grants });
    // Act / Assess
    assert.equal(asks('AROAURGENTPRODUCER001:svc', 'urgent'), true);
    assert.equal(asks('AROAPRODUCERA00000001:svc', 'urgent'), false, 'a tenant grant alone grants no priority');
    assert.equal(asks('AROALANECONSUMER00001:ratelane-us-consumer', 'urgent'), true, "the lane's own re-send");
    assert.equal(asks('AROASTRANGER000000001:svc', 'bulk'), true);
    assert.equal(asks(undefined, 'urgent'), false);
    assert.equal(
      mayStateTenant({ tenant: 'team-a', senderId: 'AROAURGENTPRODUCER001:svc', laneSenders, grants }),
      false,
      'a priority grant alone grants no tenant',
    );
  });
});
