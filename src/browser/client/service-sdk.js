// The service's browser client, served at /sdk/service-sdk.js: an ES module without dependencies. It reports
// the SDK's analytics events to POST /actions/sdk, signs persons in and up with a password or a passkey,
// answers second-factor challenges (TOTP, passkey), holds anonymous persons, and keeps the person's token in
// localStorage and the tab's correlation id in sessionStorage. The passkey ceremonies load
// @simplewebauthn/browser from /sdk/webauthn.js the first time they run.
//
//   import { ServiceSDK } from '<base_url>/sdk/service-sdk.js';
//   const sdk = new ServiceSDK({ baseUrl, orgId, sdkVersion });

const CORRELATION_KEY = 'service-sdk:analytics-correlation-id';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuid() {
  if (globalThis.crypto && typeof globalThis.crypto.randomUUID === 'function') return globalThis.crypto.randomUUID();
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Storage that may be missing (private modes, sandboxed frames): then nothing is kept. */
function storageOf(name) {
  try {
    const s = globalThis[name];
    const probe = 'service-sdk:probe';
    s.setItem(probe, '1');
    s.removeItem(probe);
    return s;
  } catch {
    return undefined;
  }
}

/** The claims of a JWT, for the client's own use only: the service verifies tokens, the page does not. */
export function decodeClaims(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(decodeURIComponent(escape(atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), '=')))));
  } catch {
    return undefined;
  }
}

/** A refused call: the HTTP status and the service's message. */
export class ServiceError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ServiceError';
    this.status = status;
  }
}

export class ServiceSDK {
  /**
   * Sends ServiceSDKLoaded_v1, then restores a stored token that has not expired (PersonIdentified_v1).
   * `ready` settles once the stored token was checked with the service (forgotten when no longer valid).
   */
  constructor({ baseUrl, orgId, sdkVersion = '1.0.0' }) {
    if (!baseUrl || !orgId) throw new TypeError('ServiceSDK: baseUrl and orgId are required');
    this.baseUrl = String(baseUrl).replace(/\/+$/, '');
    this.orgId = orgId;
    this.sdkVersion = sdkVersion;
    this.person = null;
    this._local = storageOf('localStorage');
    this._session = storageOf('sessionStorage');
    this._tokenKey = `service-sdk:${orgId}:token`;
    this._identified = null;
    this._queue = Promise.resolve();
    let id = this._session && this._session.getItem(CORRELATION_KEY);
    if (!id || !UUID.test(id)) {
      id = uuid();
      if (this._session) this._session.setItem(CORRELATION_KEY, id);
    }
    this.correlationId = id;
    this._track({ event_name: 'ServiceSDKLoaded_v1' });
    const stored = this._local && this._local.getItem(this._tokenKey);
    const claims = stored ? decodeClaims(stored) : undefined;
    if (stored && claims && typeof claims.exp === 'number' && claims.exp * 1000 > Date.now() && claims.oid === orgId) this._hold(stored, claims);
    else if (stored) this._forget();
    this.ready = this.person ? this._check() : Promise.resolve();
  }

  /**
   * Signs in with a handle and password; an anonymous person held is handed over (and deleted by the service).
   * For a person who holds a second factor: `{second_factor: {challenge, methods, expires_in}}`, to answer with
   * answerTotp or signInWithPasskey({challenge}).
   */
  async signIn({ handle, password }) {
    return this._authenticate('/authenticate/password', 200, { handle, password });
  }

  /** Answers a second-factor challenge with a TOTP code (or a recovery code). */
  async answerTotp({ challenge, code, recovery_code }) {
    return this._authenticate('/authenticate/totp', 200, { challenge, ...(code !== undefined && { code }), ...(recovery_code !== undefined && { recovery_code }) });
  }

  /** Signs in with a passkey: discoverable (no handle), or as the second factor `challenge` asks for. */
  async signInWithPasskey({ challenge } = {}) {
    const { startAuthentication } = await this._webauthn();
    const r = await this._call('POST', '/authenticate/webauthn/options', challenge ? { challenge } : {}, { 'Service-OrgID': this.orgId });
    if (r.status !== 200) throw new ServiceError(r.status, r.message);
    const credential = await startAuthentication({ optionsJSON: r.body.result.options });
    return this._authenticate('/authenticate/webauthn', 200, challenge ? { credential, challenge } : { credential });
  }

  /** Registers a passkey of this browser for the person held (on a page of the organization's allowed domains). */
  async registerPasskey({ label } = {}) {
    const { startRegistration } = await this._webauthn();
    const options = await this.call('POST', '/register/webauthn/options', {});
    const credential = await startRegistration({ optionsJSON: options.options });
    return this.call('POST', '/register/webauthn', { credential, ...(label !== undefined && { label }) });
  }

  /** Begins TOTP enrollment for the person held: `{credential_id, key_uri, qr_code_svg}`, shown once. */
  async enrollTotp() {
    return this.call('POST', '/register/totp', {});
  }

  /** Confirms TOTP enrollment with a first code: the ten recovery codes, shown once. */
  async confirmTotp({ credential_id, code }) {
    return (await this.call('POST', '/register/totp/confirm', { credential_id, code })).recovery_codes;
  }

  /** Registers with a handle and password; an anonymous person held becomes that person. */
  async register({ handle, password }) {
    return this._authenticate('/register/password', 201, { handle, password });
  }

  /** Creates an anonymous person, or keeps the person held (anonymous or not). */
  async anonymous() {
    if (this.person) return this.person;
    const r = await this._call('POST', '/persons/anonymous', undefined, { 'Service-OrgID': this.orgId });
    if (r.status !== 201) throw new ServiceError(r.status, r.message);
    this._hold(r.body.result, decodeClaims(r.body.result));
    return this.person;
  }

  /** VirtualPageLoaded_v1 for a client-side route change; with the person when one is held. */
  trackVirtualPageView({ url } = {}) {
    return this._track({ event_name: 'VirtualPageLoaded_v1', ...(this.person && { person_id: this.person.person_id }) }, url);
  }

  /**
   * PersonLoggedOut_v1, then the token is forgotten, and signed out at the service (DELETE /session): the token
   * is revoked and the session it belongs to ended, with that session's other tokens. Offline, it is only forgotten.
   */
  async logout() {
    if (!this.person) return;
    const held = this.person;
    const sent = this._track({ event_name: 'PersonLoggedOut_v1', person_id: held.person_id });
    this._forget();
    const ended = this._call('DELETE', '/session', undefined, { Authorization: `Bearer ${held.token}` }).catch(() => undefined);
    await Promise.all([sent, ended]);
  }

  /** Calls an end-user route with the person's token, e.g. call('PATCH', '/attributes/end_user_read_write', {cart}). */
  async call(method, path, body) {
    if (!this.person) throw new ServiceError(401, 'no person is held');
    const r = await this._call(method, path, body, { Authorization: `Bearer ${this.person.token}` });
    if (r.status >= 400) throw new ServiceError(r.status, r.message);
    return r.body && r.body.result;
  }

  _webauthn() {
    return (this._webauthnModule ??= import(`${this.baseUrl}/sdk/webauthn.js`));
  }

  async _authenticate(path, okStatus, body) {
    const headers = { 'Service-OrgID': this.orgId };
    if (this.person && this.person.person_type === 'anonymous') headers.Authorization = `Bearer ${this.person.token}`;
    const previous = this.person;
    let r;
    try {
      r = await this._call('POST', path, body, headers);
    } catch (error) {
      this._failed(body.handle, 'client_side_error', String(error), previous);
      throw error;
    }
    // A first factor that is not enough: nothing is held yet, the caller answers the challenge.
    if (r.status === okStatus && r.body && r.body.result && r.body.result.second_factor) return { second_factor: r.body.result.second_factor };
    if (r.status !== okStatus || !r.body || !r.body.result || !r.body.result.token) {
      const reason = r.status === 401 ? 'incorrect_password' : r.status === 400 && /password/i.test(r.message) ? 'invalid_password' : 'client_side_error';
      this._failed(body.handle, reason, r.message, previous);
      throw new ServiceError(r.status, r.message || `the service answered ${r.status}`);
    }
    const token = r.body.result.token;
    const claims = decodeClaims(token);
    this._hold(token, claims);
    const methods = Array.isArray(claims.authenticated_methods) ? claims.authenticated_methods : ['password'];
    this._track({
      event_name: 'AuthenticationSucceeded_v1',
      person_id: this.person.person_id,
      success_authn_method: methods[methods.length - 1] || 'password',
      authenticated_methods: methods,
      ...(body.handle && { handle: body.handle }),
    });
    return this.person;
  }

  _failed(handle, failure_reason, failure_detail, previous) {
    this._track({
      event_name: 'AuthenticationFailed_v1',
      failed_authn_method: 'password',
      failure_reason,
      ...(failure_detail && { failure_detail: String(failure_detail).slice(0, 2000) }),
      ...(handle && { handle }),
      ...(previous && previous.person_type !== 'anonymous' && { person_id: previous.person_id, authenticated_methods: previous.authenticated_methods }),
    });
  }

  /** Holds a token; PersonIdentified_v1 whenever the person changes to a new one. */
  _hold(token, claims) {
    if (!claims || typeof claims.sub !== 'string') return;
    this.person = {
      person_id: claims.sub,
      token,
      person_type: claims.person_type === 'anonymous' ? 'anonymous' : 'regular',
      authenticated_methods: Array.isArray(claims.authenticated_methods) ? claims.authenticated_methods : [],
    };
    if (this._local) this._local.setItem(this._tokenKey, token);
    if (this._identified !== claims.sub) {
      this._identified = claims.sub;
      this._track({ event_name: 'PersonIdentified_v1', person_id: claims.sub });
    }
  }

  _forget() {
    this.person = null;
    this._identified = null;
    if (this._local) this._local.removeItem(this._tokenKey);
  }

  async _check() {
    const held = this.person;
    try {
      const r = await this._call('POST', '/token/validate', { token: held.token }, {});
      if (r.status === 200 && r.body.result && r.body.result.valid === false && this.person === held) this._forget();
    } catch {
      // Offline: keep the token; the service will refuse it if it must.
    }
  }

  async _call(method, path, body, headers) {
    const h = { 'Service-SdkVersion': this.sdkVersion, 'Service-Analytics-Correlation-ID': this.correlationId, ...headers };
    if (body !== undefined) h['Content-Type'] = 'application/json';
    const res = await fetch(this.baseUrl + path, { method, headers: h, ...(body !== undefined && { body: JSON.stringify(body) }) });
    const text = await res.text();
    let parsed;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const message = parsed && parsed.errors && parsed.errors[0] ? parsed.errors[0].message : '';
    return { status: res.status, body: parsed, message };
  }

  /**
   * Reports one event: keepalive fetch, so that it arrives even when the page navigates away at once. Events go
   * one after another, in the order they happened; failures are swallowed (analytics never breaks the page).
   */
  _track(event_data, url) {
    const body = JSON.stringify({
      organization_id: this.orgId,
      analytics_correlation_id: this.correlationId,
      window_location: url === undefined ? String(globalThis.location ? globalThis.location.href : '/') : new URL(url, globalThis.location && globalThis.location.href).href,
      user_agent: globalThis.navigator ? globalThis.navigator.userAgent : '',
      event_data,
    });
    const send = () =>
      fetch(`${this.baseUrl}/actions/sdk`, { method: 'POST', keepalive: true, headers: { 'Content-Type': 'application/json', 'Service-SdkVersion': this.sdkVersion }, body }).then(
        () => undefined,
        () => undefined,
      );
    this._queue = this._queue.then(send);
    return this._queue;
  }
}
