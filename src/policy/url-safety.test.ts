import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { allowedSchemes, checkUrl, linksEnabled, MAX_URL_LENGTH, redactUrlForLog, type UrlCheck } from './url-safety.ts';

function codeOf(r: UrlCheck): string {
  return r.ok ? 'ok' : r.code;
}

test('checkUrl accepts http, https and mailto and returns the normalised href', () => {
  const a = checkUrl('HTTPS://Example.COM/a_(b)?q=1#frag');
  assert.deepEqual(a, { ok: true, href: 'https://example.com/a_(b)?q=1#frag', display: 'https://example.com' });
  const b = checkUrl('http://example.com:8080');
  assert.deepEqual(b, { ok: true, href: 'http://example.com:8080/', display: 'http://example.com:8080' });
  const c = checkUrl('mailto:dev@example.com?subject=secret');
  assert.deepEqual(c, { ok: true, href: 'mailto:dev@example.com?subject=secret', display: 'mailto:dev@example.com' });
});

test('checkUrl refuses every dangerous or unknown scheme with E_URL_SCHEME', () => {
  for (const raw of [
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'file:///etc/passwd',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'myapp://do/something',
    'ssh://host',
    'about:blank',
  ]) {
    const r = checkUrl(raw);
    assert.equal(codeOf(r), 'E_URL_SCHEME', raw);
    assert.ok(!r.ok && r.reason.length > 0);
  }
});

test('checkUrl allows operator-configured extra schemes but never dangerous ones', () => {
  assert.equal(codeOf(checkUrl('vscode://file/x', { extraSchemes: ['vscode'] })), 'ok');
  assert.equal(codeOf(checkUrl('ssh://host', { extraSchemes: ['SSH:'] })), 'ok');
  for (const s of ['javascript', 'file', 'data', 'vbscript']) {
    const r = checkUrl(`${s}:x`, { extraSchemes: [s] });
    assert.equal(codeOf(r), 'E_URL_SCHEME', s);
    assert.match(!r.ok ? r.reason : '', /can never be enabled/u);
  }
  assert.deepEqual([...allowedSchemes(['not a scheme', '1bad', 'git+ssh'])].sort(), ['git+ssh', 'http', 'https', 'mailto']);
});

test('checkUrl refuses text starting with "-" even when it would parse', () => {
  assert.equal(codeOf(checkUrl('--help')), 'E_URL_INVALID');
  assert.equal(codeOf(checkUrl('-https://example.com')), 'E_URL_INVALID');
});

test('checkUrl refuses credentials', () => {
  assert.equal(codeOf(checkUrl('https://user:pass@example.com/')), 'E_URL_CREDENTIALS');
  assert.equal(codeOf(checkUrl('https://user@example.com/')), 'E_URL_CREDENTIALS');
  assert.equal(codeOf(checkUrl('https://:pw@example.com/')), 'E_URL_CREDENTIALS');
  const r = checkUrl('https://u:secretpw@example.com/');
  assert.ok(!r.ok && !r.reason.includes('secretpw'));
});

test('checkUrl refuses control, whitespace and bidi characters anywhere', () => {
  const bad = [
    '\u0000',
    '\u0007',
    '\u001b',
    '\t',
    '\n',
    '\r',
    ' ',
    '\u007f',
    '\u0085',
    '\u009b',
    '\u00a0',
    '\u2028',
    '\u3000',
    '\u202a',
    '\u202b',
    '\u202c',
    '\u202d',
    '\u202e',
    '\u2066',
    '\u2067',
    '\u2068',
    '\u2069',
    '\u200e',
    '\u200f',
    '\u061c',
    '\u200b',
    '\ufeff',
  ];
  for (const ch of bad) {
    for (const raw of [`https://example.com/a${ch}b`, `${ch}https://example.com/`, `https://exa${ch}mple.com/`]) {
      const r = checkUrl(raw);
      assert.equal(codeOf(r), 'E_URL_CONTROL', JSON.stringify(raw));
      // The reason names the code point instead of echoing it.
      assert.ok(!r.ok && (ch === ' ' || !r.reason.includes(ch)) && /U\+[0-9A-F]{4}/u.test(r.reason));
    }
  }
});

test('checkUrl enforces the length cap', () => {
  const base = 'https://example.com/';
  assert.equal(codeOf(checkUrl(base + 'a'.repeat(MAX_URL_LENGTH - base.length))), 'ok');
  assert.equal(codeOf(checkUrl(base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1))), 'E_URL_TOO_LONG');
});

test('checkUrl refuses text that is not an absolute URL', () => {
  for (const raw of ['', 'example.com', '/relative', 'https://', 'http://[::1', 'mailto']) {
    assert.notEqual(codeOf(checkUrl(raw)), 'ok', raw);
  }
  assert.equal(codeOf(checkUrl('example.com')), 'E_URL_INVALID');
});

test('checkUrl shows punycode first for international hosts and never the query or fragment', () => {
  const r = checkUrl('https://bücher.example/pfad?token=abc#section');
  assert.ok(r.ok);
  assert.equal(r.display, 'https://xn--bcher-kva.example (bücher.example)');
  assert.equal(r.href, 'https://xn--bcher-kva.example/pfad?token=abc#section');
  const p = checkUrl('https://xn--bcher-kva.example:8443/');
  assert.ok(p.ok);
  assert.equal(p.display, 'https://xn--bcher-kva.example:8443 (bücher.example)');
  // A Cyrillic look-alike of "apple" is shown as the punycode it really is.
  const spoof = checkUrl('https://аррӏе.com/');
  assert.ok(spoof.ok);
  assert.match(spoof.display, /^https:\/\/xn--/u);
});

test('property: an accepted URL has an allowed scheme, no credentials and a clean href', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        fc.string(),
        fc.string({ unit: 'binary' }),
        fc.string({ unit: 'binary' }).map((s) => `https://example.com/${s}`),
      ),
      (raw) => {
        const r = checkUrl(raw);
        if (!r.ok) return;
        const u = new URL(r.href);
        assert.ok(['http:', 'https:', 'mailto:'].includes(u.protocol));
        assert.equal(u.username, '');
        assert.equal(u.password, '');
        assert.ok(!r.href.startsWith('-'));
        assert.ok(!/[\p{Cc}\p{Cf}\s]/u.test(r.href));
        assert.ok(!r.display.includes('?') && !r.display.includes('#'));
      },
    ),
    { numRuns: 3000 },
  );
});

test('linksEnabled honours JACKIN_OPEN_LINKS deny/off/no/0/false in any case', () => {
  for (const v of ['deny', 'DENY', 'Off', 'no', '0', 'false', 'FALSE', ' off ']) {
    assert.equal(linksEnabled({ JACKIN_OPEN_LINKS: v }), false, v);
  }
  for (const v of [undefined, '', '1', 'yes', 'allow', 'on']) {
    assert.equal(linksEnabled({ JACKIN_OPEN_LINKS: v }), true, String(v));
  }
  assert.equal(linksEnabled({}), true);
});

test('redactUrlForLog drops query, fragment and credentials', () => {
  assert.equal(redactUrlForLog('https://example.com/cb?code=SECRET&state=x#tok=SECRET'), 'https://example.com/cb?…#…');
  assert.equal(redactUrlForLog('https://example.com/plain'), 'https://example.com/plain');
  assert.equal(redactUrlForLog('https://u:SECRET@example.com/'), 'https://…@example.com/');
  assert.equal(redactUrlForLog('mailto:a@example.com?subject=SECRET'), 'mailto:a@example.com?…');
  assert.equal(redactUrlForLog('not a url?SECRET'), 'not\\u{20}a\\u{20}url?…');
  assert.equal(redactUrlForLog('//u:SECRET@host/x#SECRET'), '//…@host/x#…');
  assert.equal(redactUrlForLog('https://e.com/\u001b[31m'), 'https://e.com/%1B[31m');
  assert.ok(redactUrlForLog(`https://e.com/${'a'.repeat(10000)}`).length <= 300);
});

test('checkUrl refuses a mailto link whose query asks the mail client to attach a file', () => {
  for (const raw of [
    'mailto:a@example.com?attach=/etc/passwd',
    'mailto:a@example.com?subject=hi&Attachment=%2Fhome%2Fme%2F.ssh%2Fid_ed25519',
    'mailto:a@example.com?%61ttach=~/.netrc',
    'MAILTO:a@example.com?ATTACHMENTS=x',
  ]) {
    const r = checkUrl(raw);
    assert.equal(codeOf(r), 'E_URL_ATTACHMENT', raw);
    assert.ok(!r.ok && !r.reason.includes('/etc') && !r.reason.includes('.ssh'), raw);
  }
  // A body or subject mentioning the word is fine, and so is a web URL with attach= (no mail client).
  assert.equal(codeOf(checkUrl('mailto:a@example.com?subject=attach%20this&body=attachment')), 'ok');
  assert.equal(codeOf(checkUrl('https://example.com/?attach=/etc/passwd')), 'ok');
});
