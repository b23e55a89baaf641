// The part of oidc-provider's API the tests use: the package ships no type declarations.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Model {
    consume(): Promise<void>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown> & { findAccount?: (ctx: unknown, sub: string) => Promise<unknown> });
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    AuthorizationCode: { find(code: string): Promise<Model | undefined> };
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
