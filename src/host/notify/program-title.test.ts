import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markProgramTitle, startsLikeJackin } from './program-title.ts';

test("program title: one that starts like jackin's, whatever its case, accents, width, lookalikes or leading symbols, is marked", () => {
  for (const t of [
    'jackin',
    'jackin: action required',
    'JACKIN approve',
    '[jackin] confirm',
    '✓ Jackin: opened',
    '! jackin: warning',
    'J\u0430ckin',
    'ｊａｃｋｉｎ',
    'jáckín',
    'jack1n',
    'j a c k i n',
    '𝐣𝐚𝐜𝐤𝐢𝐧',
    'jаск\u0456п',
  ]) {
    assert.ok(startsLikeJackin(t), t);
    assert.equal(markProgramTitle(t), `program: ${t}`);
  }
  for (const t of ['Build', 'agent: fix bug', 'claude: jackin is fine', 'jack', '', '✓ Opened https://x.example/']) {
    assert.ok(!startsLikeJackin(t), t);
    assert.equal(markProgramTitle(t), t);
  }
});
