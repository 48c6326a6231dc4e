import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { type Bundle, ensureInstalled, findBundle, pickPython, type Run, venvPaths } from '../../src/bundledServer';

function tmpdir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'rewind-bundle-'));
}

describe('findBundle', () => {
  it('reads VERSION, PYTHONS and the wheels; none without them', () => {
    const ext = tmpdir();
    assert.equal(findBundle(ext), undefined);
    fs.mkdirSync(path.join(ext, 'bundled', 'wheels'), { recursive: true });
    fs.writeFileSync(path.join(ext, 'bundled', 'VERSION'), '0.1.0\n');
    fs.writeFileSync(path.join(ext, 'bundled', 'PYTHONS'), '3.10 3.11\n');
    assert.equal(findBundle(ext), undefined, 'no wheels yet');
    for (const w of ['rewind_ls-0.1.0-py3-none-any.whl', 'pip-25.3-py3-none-any.whl']) {
      fs.writeFileSync(path.join(ext, 'bundled', 'wheels', w), '');
    }
    const b = findBundle(ext);
    assert.deepEqual(b?.pythons, ['3.10', '3.11']);
    assert.equal(b?.pipWheel, path.join(ext, 'bundled', 'wheels', 'pip-25.3-py3-none-any.whl'));
  });
});

describe('pickPython', () => {
  const versions: Record<string, string> = { '/old': 'CPython 3 9', '/pypy': 'PyPy 3 11', '/new': 'CPython 3 14', '/ok': 'CPython 3 11' };
  const runner: Run = (file) => Promise.resolve(file in versions ? { code: 0, out: `${versions[file]}\n` } : { code: -1, out: 'ENOENT' });
  it('takes the first CPython the bundle carries, and says why the others do not fit', async () => {
    assert.deepEqual(await pickPython(['/gone', '/old', '/pypy', '/new', '/ok'], ['3.10', '3.11'], runner), { python: '/ok', minor: 11 });
    const r = await pickPython(['/gone', '/old', '/new'], ['3.10', '3.11'], runner);
    assert.ok('tried' in r);
    assert.match(r.tried.join('; '), /\/gone \(does not run\); \/old \(CPython 3\.9: needs CPython 3\.10 or later\); \/new \(3\.14: this \.vsix carries the server for CPython 3\.10, 3\.11\)/);
  });
});

describe('ensureInstalled', () => {
  const bundle = (): Bundle => ({ version: '0.1.0', wheels: '/b/wheels', pipWheel: '/b/wheels/pip.whl', pythons: ['3.11'] });
  it('makes the venv, installs offline from the wheels, and reuses a complete one', async () => {
    const storage = tmpdir();
    const calls: string[][] = [];
    const runner: Run = (file, args) => {
      calls.push([file, ...args]);
      if (args[0] === '-m') fs.mkdirSync(path.join(args[3], 'bin'), { recursive: true });
      else fs.writeFileSync(venvPaths(storage, bundle(), 11).exe, '');
      return Promise.resolve({ code: 0, out: '' });
    };
    const exe = await ensureInstalled(bundle(), storage, '/usr/bin/python3', 11, () => undefined, runner);
    assert.equal(exe, path.join(storage, 'server-0.1.0-py3.11', 'bin', 'rewind-ls'));
    assert.deepEqual(calls[0], ['/usr/bin/python3', '-m', 'venv', '--without-pip', path.join(storage, 'server-0.1.0-py3.11')]);
    assert.ok(calls[1].includes('--no-index') && calls[1].includes('--isolated') && calls[1].includes('rewind-ls==0.1.0'));
    assert.equal(calls[1][1], path.join('/b/wheels/pip.whl', 'pip'));
    assert.equal(await ensureInstalled(bundle(), storage, '/usr/bin/python3', 11, () => undefined, runner), exe);
    assert.equal(calls.length, 2, 'a complete venv is used as it is');
    assert.ok(!fs.existsSync(`${path.join(storage, 'server-0.1.0-py3.11')}.lock`));
  });
  it('makes a half-made venv again, and says what failed', async () => {
    const storage = tmpdir();
    const { dir } = venvPaths(storage, bundle(), 11);
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'bin', 'rewind-ls'), ''); // no marker: a crash during the install
    const failing: Run = (_f, args) => Promise.resolve(args[0] === '-m' ? { code: 0, out: '' } : { code: 1, out: 'ERROR: no matching distribution' });
    await assert.rejects(ensureInstalled(bundle(), storage, '/p', 11, () => undefined, failing), /Python 3\.11\): ERROR: no matching distribution/);
    assert.ok(!fs.existsSync(path.join(dir, 'bin', 'rewind-ls')), 'the half-made venv was removed first');
  });
});
