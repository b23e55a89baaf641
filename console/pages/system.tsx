// What the service publishes about itself: the identity tokens' signing keys (the public JWKS) and each
// region link with its lag (GET /health). Rotating keys and changing regions are operator routes, not an
// organization's, so the console shows them and says how they change.
import { Problem, Section, useLoad } from '../ui.js';

interface Jwk {
  kid: string;
  kty: string;
  alg?: string;
  crv?: string;
  use?: string;
}
interface Region {
  name: string;
  state: string;
  lag_entries: number;
}

async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path);
  if (!res.ok) throw new Error(`${path}: ${res.status} ${res.statusText}`);
  return (await res.json()) as T;
}

export function SigningKeysPage() {
  const jwks = useLoad(() => getJson<{ keys: Jwk[] }>('/.well-known/jwks.json'), []);
  return (
    <Section title="Identity token signing keys">
      <p>The public keys at /.well-known/jwks.json: the current key first, then retired keys until the tokens they signed expire. The service's operator rotates them (POST /ops/keys/rotate with the operator key).</p>
      <Problem message={jwks.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Key ID</th>
            <th scope="col">Type</th>
            <th scope="col">Algorithm</th>
            <th scope="col">Curve</th>
          </tr>
        </thead>
        <tbody>
          {(jwks.data?.keys ?? []).map((k, i) => (
            <tr key={k.kid}>
              <td>{k.kid}{i === 0 ? ' (current)' : ''}</td>
              <td>{k.kty}</td>
              <td>{k.alg ?? ''}</td>
              <td>{k.crv ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

export function RegionsPage() {
  const health = useLoad(() => getJson<{ result: { regions: Region[]; role?: string; lag_entries?: number } }>('/health'), []);
  const h = health.data?.result;
  return (
    <Section title="Region links">
      <p>Each other region this one replicates with (GET /health), and how many entries it is behind. The service's operator changes a link (PUT /ops/regions/{'{region}'} with the operator key).</p>
      <Problem message={health.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Region</th>
            <th scope="col">State</th>
            <th scope="col">Lag (entries)</th>
          </tr>
        </thead>
        <tbody>
          {(h?.regions ?? []).map((r) => (
            <tr key={r.name}>
              <td>{r.name}</td>
              <td>{r.state}</td>
              <td>{r.lag_entries}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {h?.regions.length === 0 && <p>A single region: no links.</p>}
      {h?.role !== undefined && <p>This process: {h.role}, {h.lag_entries ?? 0} entries of the region's stream not yet applied.</p>}
      <button type="button" onClick={health.reload}>Refresh</button>
    </Section>
  );
}
