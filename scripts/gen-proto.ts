// Writes src/events/events.proto from the event catalog; run after changing the catalog and commit the result.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderProto } from '../src/events/proto-text.js';

const target = fileURLToPath(new URL('../src/events/events.proto', import.meta.url));
writeFileSync(target, renderProto());
process.stdout.write(`wrote ${target}\n`);
