// A node:http request handler that cannot take its process down: whatever it throws, synchronously or from
// the promise it returns, becomes an answer (a 500 saying nothing of internals, or the socket closed when
// the head is already sent), since an uncaught exception in a request handler ends the whole process.
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** A status and a message meant for the caller: the handler's way to refuse a request it cannot read. */
export class HttpRefusal extends Error {
  override name = 'HttpRefusal';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The service's error envelope, which every process answers in. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ httpcode: status, message }] }));
}

function answer(res: ServerResponse, error: unknown, report: ((error: unknown) => void) | undefined): void {
  if (error instanceof HttpRefusal) return sendError(res, error.status, error.message);
  report?.(error);
  sendError(res, 500, 'internal error');
}

export function catching(handler: RequestHandler, report?: (error: unknown) => void): RequestHandler {
  return (req, res) => {
    try {
      const result = handler(req, res);
      if (result instanceof Promise) result.catch((error: unknown) => answer(res, error, report));
    } catch (error) {
      answer(res, error, report);
    }
  };
}

/** decodeURIComponent that refuses malformed percent-encoding with a 400 instead of a URIError. */
export function decodePathSegment(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpRefusal(400, `${what}: ${JSON.stringify(segment.slice(0, 64))} is not valid percent-encoding`);
  }
}
