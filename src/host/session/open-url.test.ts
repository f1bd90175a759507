import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { UrlCheckOk } from '../../policy/url-safety.ts';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import type { Opener } from '../platform/opener.ts';
import { openUrlChecked } from './open-url.ts';

function recordingOpener(): Opener & { opened: string[] } {
  const opened: string[] = [];
  return {
    opened,
    openUrl: async (u: string | UrlCheckOk) => {
      opened.push(typeof u === 'string' ? u : u.href);
      return { ok: true } as never;
    },
    openFile: async () => ({ ok: true }) as never,
  };
}

test('openUrlChecked: a hook that serves the target opens its URL instead, the prompt shows both, and no other hook runs', async (t) => {
  const s = new FakeFeatureSession({ forward: 1, ports: 1 });
  const ran: string[] = [];
  const other = s.addUrlOpenHook(() => ({ note: 'and forward localhost:5173 to agent', run: async () => void ran.push('login') }));
  const serving = s.addUrlOpenHook((href) =>
    href.startsWith('http://localhost:5173/')
      ? { opens: href.replace(':5173', ':40123'), note: 'opens http://localhost:40123/app (forwarded)', run: async () => void ran.push('offer') }
      : null,
  );
  t.after(() => {
    other.dispose();
    serving.dispose();
  });
  const opener = recordingOpener();
  await openUrlChecked(s, { env: {}, opener }, 'http://localhost:5173/app', 'text', true);
  assert.deepEqual(opener.opened, ['http://localhost:40123/app']);
  assert.equal(s.confirms[0]?.target, 'http://localhost:5173/app');
  assert.deepEqual(s.confirms[0]?.notes, ['opens http://localhost:40123/app (forwarded)']);
  assert.deepEqual(ran, ['offer']);
  // A link the serving hook does not take: the other hooks as before.
  await openUrlChecked(s, { env: {}, opener }, 'http://localhost:8080/', 'text', true);
  assert.deepEqual(opener.opened.at(-1), 'http://localhost:8080/');
  assert.deepEqual(ran, ['offer', 'login']);
});

test('openUrlChecked: a rewritten URL that fails the host URL check is refused, nothing opens', async (t) => {
  const s = new FakeFeatureSession({ forward: 1, ports: 1 });
  const h = s.addUrlOpenHook(() => ({ opens: 'file:///etc/passwd', run: async () => {} }));
  t.after(() => h.dispose());
  const opener = recordingOpener();
  await openUrlChecked(s, { env: {}, opener }, 'http://localhost:5173/', 'text', true);
  assert.deepEqual(opener.opened, []);
  assert.equal(s.log.at(-1)?.result, 'refused');
});
