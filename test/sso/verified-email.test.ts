import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifiedEmail } from '../../src/sso/verified-email.js';
import { chooseEmail } from '../../src/sso/user-api.js';

test('given ID-token claims, when the provider vouches as OpenID Connect says, then their email is taken', () => {
  assert.equal(verifiedEmail('google', { email: 'a@example.com', email_verified: true }), 'a@example.com');
  assert.equal(verifiedEmail('google', { email: 'a@example.com', email_verified: false }), undefined);
  assert.equal(verifiedEmail('google', { email: 'a@example.com' }), undefined);
  assert.equal(verifiedEmail('google', { email_verified: true }), undefined);
});

test("given Apple's claims, when email_verified is the string \"true\", then the email is taken; only for Apple", () => {
  assert.equal(verifiedEmail('apple', { email: 'a@privaterelay.appleid.com', email_verified: 'true' }), 'a@privaterelay.appleid.com');
  assert.equal(verifiedEmail('apple', { email: 'a@privaterelay.appleid.com', email_verified: 'false' }), undefined);
  assert.equal(verifiedEmail('service', { email: 'a@example.com', email_verified: 'true' }), undefined);
});

test("given Entra ID's claims, when xms_edov is true and email_verified absent, then the email is taken; only for azuread", () => {
  assert.equal(verifiedEmail('azuread', { email: 'g@contoso.example', xms_edov: true }), 'g@contoso.example');
  assert.equal(verifiedEmail('azuread', { email: 'g@contoso.example' }), undefined);
  assert.equal(verifiedEmail('azuread', { email: 'g@contoso.example', xms_edov: true, email_verified: false }), undefined);
  assert.equal(verifiedEmail('service', { email: 'g@contoso.example', xms_edov: true }), undefined);
});

test('given a user API email list, when choosing, then the primary verified address wins, else the first verified, never an unverified one', () => {
  const a = (email: string, verified: boolean, primary: boolean) => ({ email, verified, primary });
  assert.equal(chooseEmail([a('x@e.com', true, false), a('p@e.com', true, true)]), 'p@e.com');
  assert.equal(chooseEmail([a('p@e.com', false, true), a('x@e.com', true, false), a('y@e.com', true, false)]), 'x@e.com');
  assert.equal(chooseEmail([a('p@e.com', false, true)]), undefined);
  assert.equal(chooseEmail([]), undefined);
});
