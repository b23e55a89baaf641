// An organization actor's lifecycle: it accepts commands only while ready.
import { createActor, setup } from 'xstate';

export const orgLifecycle = setup({
  types: { events: {} as { type: 'loaded' } | { type: 'stop' } | { type: 'drained' } },
}).createMachine({
  id: 'org',
  initial: 'loading',
  states: {
    loading: { on: { loaded: 'ready', stop: 'stopped' } },
    ready: { on: { stop: 'stopping' } },
    stopping: { on: { drained: 'stopped' } },
    stopped: { type: 'final' },
  },
});

export function createLifecycle() {
  return createActor(orgLifecycle).start();
}
