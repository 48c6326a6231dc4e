// Which command starts the language server. Pure (node only, no vscode import): unit-tested.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from, for messages: "setting", "PATH" or "fallback". */
  origin: 'setting' | 'PATH' | 'fallback';
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

/**
 * The command for the `rewind.server.command` setting value: an array (used as it is), a string (split like a
 * shell would), or empty/null: `rewind-ls serve` when `rewind-ls` is on PATH, else `python3 -m rewind_ls serve`.
 */
export function resolveServerCommand(
  setting: unknown,
  onPath: (name: string) => boolean,
): ServerCommand {
  let words: string[] | undefined;
  if (Array.isArray(setting)) {
    if (!setting.every((w) => typeof w === 'string')) {
      throw new Error('rewind.server.command must be an array of strings or a string');
    }
    words = setting.filter((w: string) => w.length > 0);
  } else if (typeof setting === 'string') {
    words = splitCommandLine(setting);
  } else if (setting !== null && setting !== undefined) {
    throw new Error('rewind.server.command must be an array of strings or a string');
  }
  if (words && words.length > 0) {
    return { command: words[0], args: words.slice(1), origin: 'setting' };
  }
  if (onPath('rewind-ls')) return { command: 'rewind-ls', args: ['serve'], origin: 'PATH' };
  return { command: 'python3', args: ['-m', 'rewind_ls', 'serve'], origin: 'fallback' };
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
      : 'Install it with "pip install rewind-ls" (so that "rewind-ls" is on PATH), or set "rewind.server.command" ' +
        '(e.g. ["/path/to/python", "-m", "rewind_ls", "serve"]).';
  return `Rewind: could not start the language server with \`${displayCommand(cmd)}\`: ${error}. ${how}`;
}

/** The start error as a person can act on it (vscode-languageclient's messages speak of connections). */
export function describeStartError(message: string): string {
  if (/connection got disposed|connection.*closed|Connection is closed|exited/i.test(message)) {
    return 'the server exited while starting (its error output is in Output › Rewind)';
  }
  return message;
}
