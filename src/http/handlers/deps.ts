// What every group of handlers needs: the organizations, paging, and command execution with consistency.
import type { Command } from '../../domain/commands.js';
import type { Outcome } from '../../org/actor.js';
import type { Registry } from '../../org/registry.js';
import type { ConsistencyWaiter } from '../../regions/consistency.js';
import type { Pager } from '../paging.js';
import type { Request } from '../route.js';

export interface HandlerDeps {
  registry: Registry;
  pager: Pager;
  consistency: ConsistencyWaiter;
}

/** Runs a command on the request's organization and waits for the consistency the request asked for. */
export async function executeOutcome<R>(deps: HandlerDeps, req: Request<unknown, unknown>, command: Command): Promise<Outcome<R>> {
  const outcome = await req.org.execute<R>(command);
  await deps.consistency.wait(req.org.id, outcome.offset, req.consistency);
  return outcome;
}

/** The same, answering only the command's reply. */
export async function execute<R>(deps: HandlerDeps, req: Request<unknown, unknown>, command: Command): Promise<R> {
  return (await executeOutcome<R>(deps, req, command)).reply;
}
