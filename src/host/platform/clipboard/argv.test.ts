import { test } from 'node:test';
import assert from 'node:assert/strict';
import { macosArgv, windowsArgv, wlPasteReadArgv, wlPasteTypesArgv, xclipReadArgv, xclipTargetsArgv } from './argv.ts';

test('argv: xclip lists TARGETS then reads one type from the CLIPBOARD selection', () => {
  assert.deepEqual(xclipTargetsArgv(), { file: 'xclip', args: ['-selection', 'clipboard', '-t', 'TARGETS', '-o'] });
  assert.deepEqual(xclipReadArgv('image/png'), { file: 'xclip', args: ['-selection', 'clipboard', '-t', 'image/png', '-o'] });
});

test('argv: wl-paste lists types then reads one type without an added newline', () => {
  assert.deepEqual(wlPasteTypesArgv(), { file: 'wl-paste', args: ['--list-types'] });
  assert.deepEqual(wlPasteReadArgv('image/jpeg'), { file: 'wl-paste', args: ['--no-newline', '--type', 'image/jpeg'] });
});

test('argv: macOS runs the JXA helper with the mode and the output directory', () => {
  assert.deepEqual(macosArgv('/pkg/native/macos-clipboard.js', 'image', '/tmp/jackin-clip-x'), {
    file: 'osascript',
    args: ['-l', 'JavaScript', '/pkg/native/macos-clipboard.js', 'image', '/tmp/jackin-clip-x'],
  });
});

test('argv: Windows runs PowerShell with the script and mode as a UTF-16LE base64 -EncodedCommand', () => {
  const cmd = windowsArgv("Write-Output 'hi'", 'text');
  assert.equal(cmd.file, 'powershell.exe');
  assert.deepEqual(cmd.args.slice(0, 4), ['-NoProfile', '-NonInteractive', '-Sta', '-EncodedCommand']);
  assert.equal(cmd.args.length, 5);
  assert.equal(Buffer.from(cmd.args[4]!, 'base64').toString('utf16le'), "$JackinMode = 'text'\nWrite-Output 'hi'");
});
