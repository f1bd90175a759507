import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ELF_MACHINE, elfMachine, elfMachineOf, fakeElf } from './elf.ts';

test('elfMachineOf: e_machine of a little- and a big-endian header; null for anything else', () => {
  assert.equal(elfMachineOf(fakeElf(62)), 62);
  assert.equal(elfMachineOf(fakeElf(183)), 183);
  const big = fakeElf(0);
  big[5] = 2;
  big.writeUInt16BE(183, 18);
  assert.equal(elfMachineOf(big), 183);
  assert.equal(elfMachineOf(Buffer.from('#!/bin/sh\necho not an elf file\n')), null);
  assert.equal(elfMachineOf(fakeElf(62).subarray(0, 19)), null);
  const badData = fakeElf(62);
  badData[5] = 9;
  assert.equal(elfMachineOf(badData), null);
});

test('elfMachine reads the header of a file; this Node is of its own machine', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-elf-'));
  try {
    writeFileSync(join(dir, 'arm'), fakeElf(ELF_MACHINE.arm64, 4096));
    assert.equal(await elfMachine(join(dir, 'arm')), 183);
    writeFileSync(join(dir, 'short'), 'x');
    assert.equal(await elfMachine(join(dir, 'short')), null);
    if (process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64')) {
      assert.equal(await elfMachine(process.execPath), ELF_MACHINE[process.arch]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
