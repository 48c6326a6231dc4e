import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { describeStartError, displayCommand, findOnPath, resolveServerCommand, splitCommandLine, startFailureMessage } from '../../src/serverCommand';

describe('resolveServerCommand', () => {
  const none = (): boolean => false;
  const all = (): boolean => true;
  it('defaults to rewind-ls serve when it is on PATH, else python3 -m rewind_ls serve', () => {
    assert.deepEqual(resolveServerCommand(null, all), { command: 'rewind-ls', args: ['serve'], origin: 'PATH' });
    assert.deepEqual(resolveServerCommand(undefined, none), { command: 'python3', args: ['-m', 'rewind_ls', 'serve'], origin: 'fallback' });
    assert.equal(resolveServerCommand('', all).origin, 'PATH');
    assert.equal(resolveServerCommand([], none).origin, 'fallback');
  });
  it('takes an array as it is and splits a string like a shell', () => {
    assert.deepEqual(resolveServerCommand(['/opt/py 3/bin/python', '-m', 'rewind_ls', 'serve'], none), {
      command: '/opt/py 3/bin/python', args: ['-m', 'rewind_ls', 'serve'], origin: 'setting',
    });
    assert.deepEqual(resolveServerCommand('"/opt/py 3/bin/python" -m rewind_ls serve', none).args, ['-m', 'rewind_ls', 'serve']);
  });
  it('refuses values of the wrong type', () => {
    assert.throws(() => resolveServerCommand(42, none), /array of strings or a string/);
    assert.throws(() => resolveServerCommand(['a', 1], none), /array of strings or a string/);
  });
});

describe('splitCommandLine', () => {
  it('handles quotes and escapes', () => {
    assert.deepEqual(splitCommandLine(`a  'b c' "d \\"e\\"" f\\ g ''`), ['a', 'b c', 'd "e"', 'f g', '']);
    assert.throws(() => splitCommandLine('a "b'), /unterminated/);
  });
});

describe('findOnPath', () => {
  it('finds executables on PATH and checks explicit paths', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rewind-path-'));
    const exe = path.join(dir, 'rewind-ls');
    fs.writeFileSync(exe, '#!/bin/sh\n');
    fs.chmodSync(exe, 0o755);
    fs.writeFileSync(path.join(dir, 'not-exec'), '');
    assert.equal(findOnPath('rewind-ls', `/nonexistent${path.delimiter}${dir}`), exe);
    assert.equal(findOnPath('not-exec', dir), undefined);
    assert.equal(findOnPath('missing', dir), undefined);
    assert.equal(findOnPath(exe, ''), exe);
    fs.rmSync(dir, { recursive: true });
  });
});

describe('messages', () => {
  it('quotes words a person would have to quote', () => {
    assert.equal(displayCommand({ command: '/a b/python', args: ['-m', 'rewind_ls', "it's"] }), `'/a b/python' -m rewind_ls 'it'\\''s'`);
  });
  it('turns connection jargon into what happened', () => {
    assert.match(describeStartError('Pending response rejected since connection got disposed'), /exited while starting/);
    assert.equal(describeStartError('spawn python3 EACCES'), 'spawn python3 EACCES');
  });
  it('says how to fix a start failure', () => {
    const fallback = startFailureMessage({ command: 'python3', args: ['-m', 'rewind_ls', 'serve'], origin: 'fallback' }, 'No module named rewind_ls');
    assert.match(fallback, /python3 -m rewind_ls serve/);
    assert.match(fallback, /pip install rewind-ls/);
    assert.match(fallback, /rewind\.server\.command/);
    const setting = startFailureMessage({ command: '/x', args: [], origin: 'setting' }, 'ENOENT');
    assert.match(setting, /Check the "rewind.server.command" setting/);
  });
});
