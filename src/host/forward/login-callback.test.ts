import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CALLBACK_PARAMETERS, loginCallbackPort } from './login-callback.ts';

test('login callback: the real links of Claude Code, Codex and a direct loopback URL name their port', () => {
  assert.equal(
    loginCallbackPort(
      'https://claude.com/cai/oauth/authorize?code=true&client_id=x&response_type=code&redirect_uri=http%3A%2F%2Flocalhost%3A34067%2Fcallback&scope=user&state=abc',
    ),
    34067,
  );
  assert.equal(
    loginCallbackPort(
      'https://auth.openai.com/oauth/authorize?response_type=code&client_id=app&redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fauth%2Fcallback&state=s',
    ),
    1455,
  );
  assert.equal(loginCallbackPort('http://localhost:8976/login?token=t'), 8976);
  assert.equal(loginCallbackPort('http://127.0.0.1:5000/'), 5000);
  assert.equal(loginCallbackPort('http://[::1]:5001/cb'), 5001);
  assert.equal(loginCallbackPort('https://idp.example/authorize?return_to=http://127.0.0.1:7777/done'), 7777);
  assert.equal(loginCallbackPort('https://idp.example/authorize?callback=http%3A%2F%2F%5B%3A%3A1%5D%3A7778%2F'), 7778);
  assert.equal(loginCallbackPort('https://idp.example/authorize?redirect_url=http%3A%2F%2FLOCALHOST%3A7779'), 7779);
});

test('login callback: every callback parameter the agents use names its port, percent-encoded or not', () => {
  const ports: Record<(typeof CALLBACK_PARAMETERS)[number], number> = {
    redirect_uri: 4101,
    redirect_url: 4102,
    callback_url: 4103,
    callback: 4104,
    return_to: 4105,
    returnTo: 4106,
    oauth_callback: 4107,
  };
  assert.deepEqual([...CALLBACK_PARAMETERS].sort(), Object.keys(ports).sort());
  for (const [name, port] of Object.entries(ports)) {
    const target = `http://localhost:${port}/callback`;
    assert.equal(loginCallbackPort(`https://idp.example/authorize?client_id=x&${name}=${encodeURIComponent(target)}&state=s`), port, name);
    assert.equal(loginCallbackPort(`https://idp.example/authorize?${name}=${target}`), port, `${name} unencoded`);
  }
  // OpenRouter's PKCE sign-in, encoded and as some programs print it unencoded.
  assert.equal(
    loginCallbackPort('https://openrouter.ai/auth?callback_url=http%3A%2F%2Flocalhost%3A3000%2Fcallback&code_challenge=abc&code_challenge_method=S256'),
    3000,
  );
  assert.equal(loginCallbackPort('https://openrouter.ai/auth?callback_url=http://127.0.0.1:8765/openrouter/callback'), 8765);
  // Names are exact: query names are case-sensitive, and a look-alike is not a callback.
  assert.equal(loginCallbackPort('https://idp.example/a?Callback_URL=http%3A%2F%2Flocalhost%3A4108%2F'), null);
  assert.equal(loginCallbackPort('https://idp.example/a?returnto=http%3A%2F%2Flocalhost%3A4109%2F'), null);
});

test('login callback: no forward for links that do not call back to a loopback port of 1024 or above', () => {
  for (const href of [
    'https://example.com/',
    'https://localhost:8443/',
    'http://localhost/',
    'http://localhost:80/',
    'http://localhost:1023/',
    'http://user:pw@localhost:8080/',
    'http://10.0.0.1:8080/',
    'http://localhost.evil.example:8080/',
    'https://idp.example/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fcb',
    'https://idp.example/authorize?redirect_uri=http%3A%2F%2F192.168.1.2%3A8080%2F',
    'https://idp.example/authorize?next=http%3A%2F%2Flocalhost%3A8080%2F',
    'https://idp.example/authorize?redirect_uri=http%253A%252F%252Flocalhost%253A8080',
    'mailto:a@example.com',
  ]) {
    assert.equal(loginCallbackPort(href), null, href);
  }
});

test('login callback property: a loopback callback in any of the parameters, among any others, is found; any other host never is', () => {
  const host = fc.constantFrom('localhost', '127.0.0.1', '[::1]');
  fc.assert(
    fc.property(
      fc.constantFrom(...CALLBACK_PARAMETERS),
      host,
      fc.integer({ min: 1024, max: 65535 }),
      fc.webPath(),
      fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string({ maxLength: 20 })),
      (param, h, port, path, others) => {
        const q = new URLSearchParams(others);
        for (const p of CALLBACK_PARAMETERS) q.delete(p);
        q.set(param, `http://${h}:${port}${path}`);
        assert.equal(loginCallbackPort(`https://idp.example/authorize?${q.toString()}`), port);
      },
    ),
  );
  fc.assert(
    fc.property(fc.domain(), fc.integer({ min: 1024, max: 65535 }), (d, port) => {
      fc.pre(d !== 'localhost');
      assert.equal(loginCallbackPort(`https://idp.example/a?redirect_uri=${encodeURIComponent(`http://${d}:${port}/cb`)}`), null);
      assert.equal(loginCallbackPort(`http://${d}:${port}/`), null);
    }),
  );
});
