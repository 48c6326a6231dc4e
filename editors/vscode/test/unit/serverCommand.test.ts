import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  describeStartError,
  displayCommand,
  findOnPath,
  notFoundMessage,
  type Probe,
  resolveServerCommand,
  type ServerCommand,
  serverFromHookCommand,
  splitCommandLine,
  startFailureMessage,
} from '../../src/serverCommand';

describe('resolveServerCommand', () => {
  const probe = (over: Partial<Probe> = {}, exes: string[] = [], pythonsWithRewind: string[] = []): Probe => ({
    onPath: (name) => (exes.includes(name) ? `/usr/bin/${name}` : undefined),
    isExecutable: (file) => exes.includes(file),
    pythonHasRewind: (py) => pythonsWithRewind.includes(py),
    workspace: '/w',
    home: '/home/me',
    env: {},
    readFile: () => undefined,
    ...over,
  });
  it('takes the setting first: a command line, a path of rewind-ls, a path of a Python, an array', () => {
    assert.deepEqual(resolveServerCommand('/opt/venv/bin/rewind-ls', probe()), { command: '/opt/venv/bin/rewind-ls', args: ['serve'], origin: 'setting' });
    assert.deepEqual((resolveServerCommand('/opt/venv/bin/python3.12', probe()) as ServerCommand).args, ['-m', 'rewind_ls', 'serve']);
    assert.deepEqual((resolveServerCommand('"/opt/py 3/bin/python" -m rewind_ls serve', probe()) as ServerCommand).args, ['-m', 'rewind_ls', 'serve']);
    assert.deepEqual(resolveServerCommand(['/opt/py 3/bin/python', '-m', 'rewind_ls', 'serve'], probe()), {
      command: '/opt/py 3/bin/python', args: ['-m', 'rewind_ls', 'serve'], origin: 'setting',
    });
  });
  it('then the workspace .venv, the Python extension interpreter, PATH, pipx/uv, python3', () => {
    const py = '/w/.conda/bin/python';
    assert.equal((resolveServerCommand('', probe({ pythonInterpreter: py }, [], [py])) as ServerCommand).origin, 'Python extension');
    assert.deepEqual(resolveServerCommand(null, probe({ pythonInterpreter: py }, ['/w/.venv/bin/rewind-ls'], [py])), {
      command: '/w/.venv/bin/rewind-ls', args: ['serve'], origin: 'workspace venv',
    });
    assert.equal((resolveServerCommand(undefined, probe({}, ['rewind-ls', '/home/me/.local/bin/rewind-ls'])) as ServerCommand).origin, 'PATH');
    assert.deepEqual(resolveServerCommand([], probe({}, ['/home/me/.local/share/uv/tools/rewind-ls/bin/rewind-ls'])), {
      command: '/home/me/.local/share/uv/tools/rewind-ls/bin/rewind-ls', args: ['serve'], origin: 'pipx/uv',
    });
    assert.equal((resolveServerCommand(null, probe({}, ['python3'], ['python3'])) as ServerCommand).origin, 'fallback');
  });
  it('says where it looked when nothing works', () => {
    const r = resolveServerCommand(null, probe({ pythonInterpreter: '/usr/bin/python3' }, ['python3']));
    assert.ok('notFound' in r);
    const msg = notFoundMessage(r.notFound);
    assert.match(msg, /\/w\/\.venv\/bin\/rewind-ls/);
    assert.match(msg, /Python extension's interpreter: no rewind_ls/);
    assert.match(msg, /pipx install \.\/rewind_ls-VERSION-py3-none-any\.whl/);
    assert.doesNotMatch(msg, /pipx install rewind-ls\b/, 'not on any index yet');
  });
  it('prefers the rewind-ls the project hooks run, before the workspace venv', () => {
    const settings = JSON.stringify({
      hooks: {
        UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo other' }] }],
        PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: "'/opt/rl env/bin/rewind-ls' hook claude-code" }] }],
      },
    });
    const files: Record<string, string> = { [path.join('/w', '.claude', 'settings.json')]: settings };
    const p = probe({ readFile: (f) => files[f] }, ['/opt/rl env/bin/rewind-ls', '/w/.venv/bin/rewind-ls']);
    assert.deepEqual(resolveServerCommand(null, p), { command: '/opt/rl env/bin/rewind-ls', args: ['serve'], origin: 'hook settings' });
    // A hook whose rewind-ls is gone: the next place, and the message names the stale file.
    const gone = resolveServerCommand(null, probe({ readFile: (f) => files[f] }, ['/w/.venv/bin/rewind-ls']));
    assert.equal((gone as ServerCommand).origin, 'workspace venv');
    const none = resolveServerCommand(null, probe({ readFile: (f) => files[f] }));
    assert.ok('notFound' in none);
    assert.match(none.notFound[0], /named by \/w\/\.claude\/settings\.json: missing/);
  });
  it('reads Codex and Gemini hook settings, and the interpreter forms of the hook command', () => {
    const gemini = JSON.stringify({ hooks: { BeforeTool: [{ hooks: [{ command: '/v/bin/python3.12 -I -S /v/lib/python3.12/site-packages/rewind_ls/__main__.py hook gemini' }] }] } });
    const p = probe({ readFile: (f) => (f === path.join('/w', '.gemini', 'settings.json') ? gemini : undefined) }, ['/v/bin/python3.12']);
    assert.deepEqual(resolveServerCommand(null, p), { command: '/v/bin/python3.12', args: ['-m', 'rewind_ls', 'serve'], origin: 'hook settings' });
    assert.deepEqual(serverFromHookCommand('/v/bin/python -m rewind_ls hook codex'), ['/v/bin/python', '-m', 'rewind_ls', 'serve']);
    assert.deepEqual(serverFromHookCommand('REWIND_LS_HOME=/s /v/bin/rewind-ls hook codex'), ['/v/bin/rewind-ls', 'serve']);
    assert.equal(serverFromHookCommand('rewind-ls hook claude-code'), undefined, 'a bare name is the agent PATH: no place');
    assert.equal(serverFromHookCommand('/usr/bin/python3 /other/tool.py hook'), undefined);
    assert.equal(serverFromHookCommand('/bin/echo hi'), undefined);
  });
  it('falls back to the bundled server only when the extension carries one', () => {
    const r = resolveServerCommand(null, probe({ bundled: true }));
    assert.ok('bundled' in r && r.looked.length > 0);
    assert.ok('notFound' in resolveServerCommand(null, probe()));
  });
  it('refuses values of the wrong type', () => {
    assert.throws(() => resolveServerCommand(42, probe()), /string or an array of strings/);
    assert.throws(() => resolveServerCommand(['a', 1], probe()), /string or an array of strings/);
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
    assert.match(describeStartError('write EPIPE'), /exited while starting/);
    assert.equal(describeStartError('spawn python3 EACCES'), 'spawn python3 EACCES');
  });
  it('says how to fix a start failure', () => {
    const fallback = startFailureMessage({ command: 'python3', args: ['-m', 'rewind_ls', 'serve'], origin: 'fallback' }, 'No module named rewind_ls');
    assert.match(fallback, /python3 -m rewind_ls serve/);
    assert.match(fallback, /pipx install \.\/rewind_ls-VERSION-py3-none-any\.whl/);
    assert.match(fallback, /rewind\.server\.command/);
    const setting = startFailureMessage({ command: '/x', args: [], origin: 'setting' }, 'ENOENT');
    assert.match(setting, /Check the "rewind.server.command" setting/);
  });
});
