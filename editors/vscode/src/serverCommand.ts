// Which command starts the language server. No vscode import: unit-tested (the machine is behind `Probe`).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from, for messages. */
  origin: 'setting' | 'Python extension' | 'workspace venv' | 'PATH' | 'pipx/uv' | 'fallback';
}

/** Splits a command line into words: whitespace separates, '…' and "…" quote, \ escapes (outside '…'). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") quote = null;
      else current += ch;
    } else if (ch === '\\' && i + 1 < line.length && (quote === '"' || quote === null)) {
      current += line[++i];
      inWord = true;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote !== null) throw new Error(`unterminated ${quote} quote in: ${line}`);
  if (inWord) words.push(current);
  return words;
}

/** Finds an executable on a PATH string; returns its full path or undefined. */
export function findOnPath(
  name: string,
  pathEnv: string | undefined,
  isExecutable: (file: string) => boolean = defaultIsExecutable,
): string | undefined {
  if (name.includes('/') || name.includes(path.sep)) return isExecutable(name) ? name : undefined;
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function defaultIsExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What the discovery may look at (injected: unit tests pass fakes; server.ts passes the real machine). */
export interface Probe {
  /** Full path of an executable on PATH, or undefined. */
  onPath(name: string): string | undefined;
  isExecutable(file: string): boolean;
  /** True when `python -c "import rewind_ls"` works. */
  pythonHasRewind(python: string): boolean;
  /** The interpreter selected in the Python extension, when that extension is installed. */
  pythonInterpreter?: string;
  /** The first workspace folder. */
  workspace?: string;
  home: string;
  env: Record<string, string | undefined>;
}

const PYTHON_NAME = /^python[\d.]*(\.exe)?$/i;
const EXE = process.platform === 'win32' ? '.exe' : '';
const BIN = process.platform === 'win32' ? 'Scripts' : 'bin';

/** A command given as one word: a Python gets `-m rewind_ls serve`, anything else (rewind-ls) `serve`. */
function fromWords(words: string[], origin: ServerCommand['origin']): ServerCommand {
  const [command, ...args] = words;
  if (args.length === 0) {
    const base = path.basename(command);
    return { command, args: PYTHON_NAME.test(base) ? ['-m', 'rewind_ls', 'serve'] : ['serve'], origin };
  }
  return { command, args, origin };
}

/** Where pipx and uv put a tool's own environment and its command (their documented defaults). */
function toolInstalls(probe: Probe): string[] {
  const { env, home } = probe;
  const data = env.XDG_DATA_HOME || path.join(home, '.local', 'share');
  return [
    path.join(env.PIPX_BIN_DIR || path.join(home, '.local', 'bin'), `rewind-ls${EXE}`),
    path.join(env.PIPX_HOME || path.join(data, 'pipx'), 'venvs', 'rewind-ls', BIN, `rewind-ls${EXE}`),
    path.join(env.UV_TOOL_BIN_DIR || path.join(home, '.local', 'bin'), `rewind-ls${EXE}`),
    path.join(env.UV_TOOL_DIR || path.join(data, 'uv', 'tools'), 'rewind-ls', BIN, `rewind-ls${EXE}`),
  ];
}

/**
 * The command for the `rewind.server.command` setting value: a string (a command line, or just the path of
 * `rewind-ls` or of a Python that has rewind_ls) or an array (used as it is). Without a setting, the first of:
 * the Python extension's selected interpreter (when it has rewind_ls), the workspace's `.venv`/`venv`, `rewind-ls`
 * on PATH, a pipx or uv tool install, `python3 -m rewind_ls`. Returns the places looked at when none works.
 */
export function resolveServerCommand(setting: unknown, probe: Probe): ServerCommand | { notFound: string[] } {
  let words: string[] | undefined;
  if (Array.isArray(setting)) {
    if (!setting.every((w) => typeof w === 'string')) {
      throw new Error('rewind.server.command must be a string or an array of strings');
    }
    words = setting.filter((w: string) => w.length > 0);
  } else if (typeof setting === 'string') {
    words = splitCommandLine(setting.trim());
  } else if (setting !== null && setting !== undefined) {
    throw new Error('rewind.server.command must be a string or an array of strings');
  }
  if (words && words.length > 0) return fromWords(words, 'setting');

  const looked: string[] = [];
  const py = probe.pythonInterpreter;
  if (py) {
    if (probe.pythonHasRewind(py)) return fromWords([py], 'Python extension');
    looked.push(`${py} (the Python extension's interpreter: no rewind_ls)`);
  }
  if (probe.workspace) {
    for (const venv of ['.venv', 'venv']) {
      const exe = path.join(probe.workspace, venv, BIN, `rewind-ls${EXE}`);
      if (probe.isExecutable(exe)) return fromWords([exe], 'workspace venv');
      looked.push(exe);
    }
  }
  const onPath = probe.onPath('rewind-ls');
  if (onPath) return { command: 'rewind-ls', args: ['serve'], origin: 'PATH' };
  looked.push('rewind-ls on PATH');
  for (const exe of toolInstalls(probe)) {
    if (probe.isExecutable(exe)) return fromWords([exe], 'pipx/uv');
    if (!looked.includes(exe)) looked.push(exe);
  }
  if (probe.onPath('python3') && probe.pythonHasRewind('python3')) {
    return { command: 'python3', args: ['-m', 'rewind_ls', 'serve'], origin: 'fallback' };
  }
  looked.push('python3 -m rewind_ls');
  return { notFound: looked };
}

/** The real machine for `resolveServerCommand`. */
export function machineProbe(workspace: string | undefined, pythonInterpreter: string | undefined): Probe {
  return {
    onPath: (name) => findOnPath(name, process.env.PATH),
    isExecutable: defaultIsExecutable,
    pythonHasRewind: (python) => {
      const exe = findOnPath(python, process.env.PATH);
      if (!exe) return false;
      const r = spawnSync(exe, ['-c', 'import rewind_ls'], { timeout: 10000, stdio: 'ignore', cwd: workspace });
      return r.status === 0;
    },
    pythonInterpreter,
    workspace,
    home: os.homedir(),
    env: process.env,
  };
}

/** The message when no server was found: where we looked and how to fix it. */
export function notFoundMessage(looked: string[]): string {
  return (
    'Rewind: the rewind-ls language server was not found (looked at: ' +
    looked.join('; ') +
    '). Install it (`pipx install rewind-ls`, `uv tool install rewind-ls`, or `pip install rewind-ls` in the ' +
    "project's .venv), or set \"rewind.server.command\" to the path of rewind-ls."
  );
}

/** The command as a person would type it (for messages). */
export function displayCommand(cmd: { command: string; args: string[] }): string {
  return [cmd.command, ...cmd.args].map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The message shown when the server cannot start: what failed and how to fix it. */
export function startFailureMessage(cmd: ServerCommand, error: string): string {
  const how =
    cmd.origin === 'setting'
      ? 'Check the "rewind.server.command" setting.'
      : 'Install it (`pipx install rewind-ls`), or set "rewind.server.command" to the path of rewind-ls ' +
        '(e.g. /path/to/.venv/bin/rewind-ls).';
  return `Rewind: could not start the language server with \`${displayCommand(cmd)}\`: ${error}. ${how}`;
}

/** The start error as a person can act on it (vscode-languageclient's messages speak of connections). */
export function describeStartError(message: string): string {
  if (/connection got disposed|connection.*closed|Connection is closed|exited|EPIPE|ECONNRESET/i.test(message)) {
    return 'the server exited while starting (its error output is in Output › Rewind)';
  }
  return message;
}
