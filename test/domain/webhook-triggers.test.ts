// Given/when/then: an event trigger records the first event offset it covers, so it never reaches back into
// history; sync hook triggers carry no offset; the API shape of a trigger stays {trigger_type, trigger_name}.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apply } from '../../src/domain/apply.js';
import type { Change } from '../../src/domain/changes.js';
import type { Webhook } from '../../src/domain/state.js';
import { GENESIS, given, refused, when } from '../support/domain.js';

const webhook: Webhook = { id: 'w1', created: GENESIS.created, triggers: [], name: 'n', description: '', target_url: 'https://hooks.example.com/x', custom_headers: {}, timeout: '0s', on_failure: 'block' };
const eventTrigger = { trigger_type: 'event', trigger_name: 'PersonCreated_v1' } as const;

test('an event trigger covers events from the next offset on', () => {
  const state = given({ t: 'WebhookCreated', webhook });
  state.event_offset = 41;
  const { decision, after } = when(state, { kind: 'AddWebhookTrigger', webhook_id: 'w1', trigger: eventTrigger });
  assert.deepEqual(decision.changes, [{ t: 'WebhookTriggerAdded', id: 'w1', trigger: eventTrigger, from_event: 42 }]);
  assert.deepEqual(after.webhooks.get('w1')?.triggers, [{ ...eventTrigger, from_event: 42 }]);
});

test('an event trigger names an event message of the catalog, and a sync hook trigger a hook', () => {
  const state = given({ t: 'WebhookCreated', webhook });
  refused(state, { kind: 'AddWebhookTrigger', webhook_id: 'w1', trigger: { trigger_type: 'event', trigger_name: 'PersonCreated_v2' } }, 'ERR_BAD_REQUEST', 'trigger_name', 'PersonCreated_v2');
  refused(state, { kind: 'AddWebhookTrigger', webhook_id: 'w1', trigger: { trigger_type: 'sync_hook', trigger_name: 'PersonCreated_v1' } }, 'ERR_BAD_REQUEST', 'token_minted');
});

test('a sync hook trigger has no offset', () => {
  const trigger = { trigger_type: 'sync_hook', trigger_name: 'token_minted' } as const;
  const { decision, after } = when(given({ t: 'WebhookCreated', webhook }), { kind: 'AddWebhookTrigger', webhook_id: 'w1', trigger });
  assert.deepEqual(decision.changes, [{ t: 'WebhookTriggerAdded', id: 'w1', trigger }]);
  assert.deepEqual(after.webhooks.get('w1')?.triggers, [trigger]);
});

test('removed and attached again, it starts from the later offset', () => {
  const state = given({ t: 'WebhookCreated', webhook }, { t: 'WebhookTriggerAdded', id: 'w1', trigger: eventTrigger, from_event: 3 }, { t: 'WebhookTriggerRemoved', id: 'w1', trigger: eventTrigger });
  state.event_offset = 9;
  const { after } = when(state, { kind: 'AddWebhookTrigger', webhook_id: 'w1', trigger: eventTrigger });
  assert.deepEqual(after.webhooks.get('w1')?.triggers, [{ ...eventTrigger, from_event: 10 }]);
});

test('a change logged before offsets were recorded attaches at the offset it is replayed at', () => {
  const state = given({ t: 'WebhookCreated', webhook });
  state.event_offset = 5;
  const legacy: Change = { t: 'WebhookTriggerAdded', id: 'w1', trigger: eventTrigger };
  assert.deepEqual(apply(state, legacy).webhooks.get('w1')?.triggers, [{ ...eventTrigger, from_event: 6 }]);
});
