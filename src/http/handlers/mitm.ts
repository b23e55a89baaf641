// Phishing detection: the organization's MITM tokens (API key), the image any page may embed, and /stats/mitm.
import { Type, type Static } from '@sinclair/typebox';
import { MAX_ALLOWED_DOMAINS, MITM_TAG_MAX } from '../../domain/mitm.js';
import type { MitmToken } from '../../domain/state.js';
import { TRANSPARENT_PNG, type MitmDetector } from '../../browser/mitm.js';
import { badRequest } from '../../errors.js';
import { route, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const TokenBody = Type.Object(
  {
    allowed_domains: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: MAX_ALLOWED_DOMAINS, description: 'hosts the page may be served from: exact, or *.example.com for any host below it' }),
    tag: Type.String({ maxLength: MITM_TAG_MAX, description: 'names the protected site in detections' }),
  },
  { additionalProperties: false },
);
const TokenRet = Type.Object({
  token: Type.String(),
  allowed_domains: Type.Array(Type.String()),
  tag: Type.String(),
  created: Type.String(),
  image_url: Type.String(),
  snippet: Type.String({ description: 'HTML to place anywhere in the body of the protected page' }),
});
const StatsQuery = Type.Object({ start: Type.Optional(Type.String({ description: 'RFC 3339; default 30 days before end' })), end: Type.Optional(Type.String({ description: 'RFC 3339; default now' })) }, { additionalProperties: false });
const StatsItem = Type.Object({ mitm_domain: Type.String(), view_count: Type.Integer(), unique_ip_count: Type.Integer(), token_tag: Type.String(), allowed_domains: Type.Array(Type.String()) });

/**
 * The page's part: an empty span whose CSS background is the image. A CSS background is fetched with the
 * page's origin as Referer even under Referrer-Policy: no-referrer (Chromium), where an <img> is not; and it
 * must never be display: none, whose backgrounds are not fetched at all.
 */
export function mitmSnippet(imageUrl: string): string {
  return `<span aria-hidden="true" style="display:inline-block;width:1px;height:1px;background-image:url('${imageUrl}')"></span>`;
}

function time(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) throw badRequest(`${name}: must be an RFC 3339 time`);
  return ms;
}

export function mitmRoutes(deps: HandlerDeps, mitm: { detector: MitmDetector; issuer(): string; nowMs(): number }): Route[] {
  const view = (t: MitmToken) => {
    const image_url = `${mitm.issuer()}/mitm/${t.token}.png`;
    return { ...t, image_url, snippet: mitmSnippet(image_url) };
  };
  return [
    route<Static<typeof TokenBody>>({
      method: 'post',
      path: '/organizations/mitm-tokens',
      summary: 'Create a MITM detection token: views of its image from hosts outside allowed_domains emit MitmAttackDetected',
      tag: 'phishing detection',
      auth: 'key',
      body: TokenBody,
      success: { status: 201, result: TokenRet },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({ status: 201, result: view(await execute<MitmToken>(deps, req, { kind: 'CreateMitmToken', input: req.body })) }),
    }),
    route({
      method: 'get',
      path: '/organizations/mitm-tokens',
      summary: "The organization's MITM detection tokens",
      tag: 'phishing detection',
      auth: 'key',
      success: { status: 200, result: Type.Array(TokenRet) },
      errors: [401, 403, 404],
      handler: (req) => ({ status: 200, result: [...req.org.state.mitm_tokens.values()].map(view) }),
    }),
    route({
      method: 'delete',
      path: '/organizations/mitm-tokens/{token}',
      summary: 'Delete a MITM detection token: its image is still answered, and records nothing',
      tag: 'phishing detection',
      auth: 'key',
      success: { status: 204 },
      errors: [401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeleteMitmToken', token: req.params['token'] as string });
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/mitm/{token}.png',
      summary: 'The detection image: always a 1×1 transparent PNG; a view from a host outside the allowed domains emits MitmAttackDetected',
      tag: 'phishing detection',
      auth: 'none',
      cors: false,
      client: true,
      headers: ['referer'],
      success: { status: 200, description: 'image/png' },
      handler: (req) => {
        const raw = req.params['token'] as string;
        mitm.detector.view({ token: raw.endsWith('.png') ? raw.slice(0, -4) : raw, referer: req.headers['referer'] ?? '', origin: req.origin, ip: req.ip, userAgent: req.userAgent });
        return {
          status: 200,
          bytes: TRANSPARENT_PNG,
          contentType: 'image/png',
          headers: { 'Cache-Control': 'no-store', 'Cross-Origin-Resource-Policy': 'cross-origin' },
        };
      },
    }),
    route<unknown, Static<typeof StatsQuery>>({
      method: 'get',
      path: '/stats/mitm',
      summary: 'Views of the MITM detection images from hosts outside their allowed domains, per host',
      tag: 'phishing detection',
      auth: 'key',
      query: StatsQuery,
      success: { status: 200, result: Type.Array(StatsItem) },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const end = time(req.query.end, 'end', mitm.nowMs());
        const start = time(req.query.start, 'start', end - 30 * 86_400_000);
        if (start > end) throw badRequest('start: must not be after end');
        return { status: 200, result: mitm.detector.stats(req.org.id, start, end) };
      },
    }),
  ];
}
