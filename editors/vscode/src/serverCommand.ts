// Which command starts the language server. No vscode import: unit-tested (the machine is behind `Probe`).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const PYTHON_NAME = /^python[\d.]*(\.exe)?$/i;

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from, for messages. */
  origin: 'setting' | 'hook settings' | 'Python extension' | 'workspace venv' | 'PATH' | 'pipx/uv' | 'fallback' | 'bundled';
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
  /** A file's text, or undefined when it cannot be read (the agents' hook settings). */
  readFile(file: string): string | undefined;
  /** True when this extension carries the server (bundled/wheels: the released .vsix). */
  bundled?: boolean;
}

/** The project's agent hook settings that `rewind-ls install AGENT` writes (the project level only). */
export const HOOK_SETTINGS = [
  path.join('.claude', 'settings.json'),
  path.join('.claude', 'settings.local.json'),
  path.join('.codex', 'hooks.json'),
  path.join('.gemini', 'settings.json'),
];

/** Every `command` string under `hooks` in an agent's settings JSON (Claude Code, Codex, Gemini share it). */
function hookCommandStrings(text: string): string[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return [];
  }
  const out: string[] = [];
  const hooks = (data as { hooks?: unknown } | null)?.hooks;
  if (!hooks || typeof hooks !== 'object') return out;
  for (const groups of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    for (const g of groups) {
      const inner = (g as { hooks?: unknown } | null)?.hooks;
      if (!Array.isArray(inner)) continue;
      for (const h of inner) {
        const c = (h as { command?: unknown } | null)?.command;
        if (typeof c === 'string') out.push(c);
      }
    }
  }
  return out;
}

/**
 * The server command of the rewind-ls a hook command runs, or undefined when it is not ours. The forms
 * `rewind-ls install` writes: `/abs/rewind-ls hook AGENT`, `/abs/python -m rewind_ls hook AGENT` and
 * `/abs/python -I -S /abs/rewind_ls/__main__.py hook AGENT`: the same interpreter serves (`-m rewind_ls serve`,
 * with its site-packages).
 */
export function serverFromHookCommand(command: string): string[] | undefined {
  let words: string[];
  try {
    words = splitCommandLine(command);
  } catch {
    return undefined;
  }
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift(); // VAR=value prefixes
  const at = words.indexOf('hook');
  if (at < 1) return undefined;
  const head = words.slice(0, at);
  const exe = head[0];
  if (!path.isAbsolute(exe)) return undefined; // a bare name depends on the agent's PATH: not a place
  const base = path.basename(exe);
  if (/^rewind-ls(\.exe)?$/i.test(base)) return [exe, 'serve'];
  const ours = head.some((w, i) => (w === 'rewind_ls' && head[i - 1] === '-m') || /rewind_ls[\\/]__main__\.py$/.test(w));
  if (PYTHON_NAME.test(base) && ours) return [exe, '-m', 'rewind_ls', 'serve'];
  return undefined;
}

/** The servers named by the project's agent hook settings, with the file each comes from. */
function hookServers(probe: Probe): { file: string; words: string[] }[] {
  if (!probe.workspace) return [];
  const out: { file: string; words: string[] }[] = [];
  for (const rel of HOOK_SETTINGS) {
    const file = path.join(probe.workspace, rel);
    const text = probe.readFile(file);
    if (text === undefined) continue;
    for (const c of hookCommandStrings(text)) {
      const words = serverFromHookCommand(c);
      if (words && !out.some((o) => o.words.join('\0') === words.join('\0'))) out.push({ file, words });
    }
  }
  return out;
}

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

/** Nothing installed was found, but the extension carries the server: install it (bundledServer.ts). */
export interface UseBundled {
  bundled: true;
  looked: string[];
}

/**
 * The command for the `rewind.server.command` setting value: a string (a command line, or just the path of
 * `rewind-ls` or of a Python that has rewind_ls) or an array (used as it is). Without a setting, the first of:
 * the rewind-ls the project's agent hooks run (so hooks and editor use one version on one store), the
 * workspace's `.venv`/`venv`, the Python extension's selected interpreter (when it has rewind_ls), `rewind-ls`
 * on PATH, a pipx or uv tool install, `python3 -m rewind_ls`, then the server this extension carries. Returns
 * the places looked at when none works.
 */
export function resolveServerCommand(
  setting: unknown,
  probe: Probe,
): ServerCommand | UseBundled | { notFound: string[] } {
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
  for (const { file, words } of hookServers(probe)) {
    if (probe.isExecutable(words[0])) return { command: words[0], args: words.slice(1), origin: 'hook settings' };
    looked.push(`${words[0]} (named by ${file}: missing)`);
  }
  if (probe.workspace) {
    for (const venv of ['.venv', 'venv']) {
      const exe = path.join(probe.workspace, venv, BIN, `rewind-ls${EXE}`);
      if (probe.isExecutable(exe)) return fromWords([exe], 'workspace venv');
      looked.push(exe);
    }
  }
  const py = probe.pythonInterpreter;
  if (py) {
    if (probe.pythonHasRewind(py)) return fromWords([py], 'Python extension');
    looked.push(`${py} (the Python extension's interpreter: no rewind_ls)`);
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
  if (probe.bundled) return { bundled: true, looked };
  return { notFound: looked };
}

/** The real machine for `resolveServerCommand`. */
export function machineProbe(
  workspace: string | undefined,
  pythonInterpreter: string | undefined,
  bundled = false,
): Probe {
  return {
    readFile: (file) => {
      try {
        return fs.readFileSync(file, 'utf8');
      } catch {
        return undefined;
      }
    },
    bundled,
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

/** How to install the server today (the package is on no index yet): what `notFoundMessage` and the READMEs say. */
export const INSTALL_HINT =
  'Install the rewind-ls wheel from the release (`pipx install ./rewind_ls-VERSION-py3-none-any.whl`, ' +
  '`uv tool install ./rewind_ls-VERSION-py3-none-any.whl`, or `pipx install /path/to/rewind-ls` from a checkout), ' +
  "or use the platform .vsix from the release, which carries the server";

/** The message when no server was found: where we looked and how to fix it. */
export function notFoundMessage(looked: string[]): string {
  return (
    'Rewind: the rewind-ls language server was not found (looked at: ' +
    looked.join('; ') +
    `). ${INSTALL_HINT}; or set "rewind.server.command" to the path of rewind-ls.`
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
      : `${INSTALL_HINT}; or set "rewind.server.command" to the path of rewind-ls (e.g. /path/to/.venv/bin/rewind-ls).`;
  return `Rewind: could not start the language server with \`${displayCommand(cmd)}\`: ${error}. ${how}`;
}

/** The start error as a person can act on it (vscode-languageclient's messages speak of connections). */
export function describeStartError(message: string): string {
  if (/connection got disposed|connection.*closed|Connection is closed|exited|EPIPE|ECONNRESET/i.test(message)) {
    return 'the server exited while starting (its error output is in Output › Rewind)';
  }
  return message;
}
