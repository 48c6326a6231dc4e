// The server this extension carries (the released platform .vsix): bundled/wheels holds the rewind-ls wheel and
// its dependencies' wheels for CPython 3.10-3.14 on the .vsix's platform, and pip's own wheel. On first use they
// are installed, offline, into a venv of the extension's global storage made with the person's Python. No vscode
// import: unit-tested.
//
// Why wheels + a venv and not `bundled/libs` on PYTHONPATH (the Python tools extension template): our dependencies
// have compiled parts (pydantic-core, orjson, zstandard) built per CPython minor and platform, so one libs folder
// cannot serve every interpreter; pip picks the matching wheels. And the agent hooks need a stable command that
// runs without the extension (a venv's interpreter, written by `rewind-ls install` by absolute path).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const BIN = process.platform === 'win32' ? 'Scripts' : 'bin';
const EXE = process.platform === 'win32' ? '.exe' : '';
const MIN_MINOR = 10;

export interface Bundle {
  version: string;
  wheels: string;
  pipWheel: string;
  /** The CPython minors whose wheels it carries ("3.10", …; bundled/PYTHONS). */
  pythons: string[];
}

/** The bundle in an extension folder, or undefined when this build carries none (a development .vsix). */
export function findBundle(extensionPath: string): Bundle | undefined {
  const root = path.join(extensionPath, 'bundled');
  const wheels = path.join(root, 'wheels');
  let version: string;
  let names: string[];
  let pythons: string[];
  try {
    version = fs.readFileSync(path.join(root, 'VERSION'), 'utf8').trim();
    pythons = fs.readFileSync(path.join(root, 'PYTHONS'), 'utf8').trim().split(/\s+/).filter(Boolean);
    names = fs.readdirSync(wheels);
  } catch {
    return undefined;
  }
  const pip = names.find((n) => /^pip-[\d.]+-py3-none-any\.whl$/.test(n));
  const ours = names.find((n) => n.startsWith(`rewind_ls-${version}-`) && n.endsWith('.whl'));
  if (!version || !pip || !ours) return undefined;
  return { version, wheels, pipWheel: path.join(wheels, pip), pythons };
}

export type Run = (file: string, args: string[], opts?: { timeout?: number }) => Promise<{ code: number; out: string }>;

/** Runs a program, resolving with its exit code and output (never rejects). */
export const run: Run = (file, args, opts) =>
  new Promise((resolve) => {
    execFile(file, args, { timeout: opts?.timeout ?? 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, out: `${stdout}${stderr}${err && code === -1 ? String(err.message) : ''}` });
    });
  });

/**
 * The first candidate that is CPython >= 3.10 and one of the bundle's minors (`pythons`, e.g. ["3.10", "3.11"]),
 * with its minor version; the ones tried and why not, otherwise.
 */
export async function pickPython(
  candidates: string[],
  pythons: string[],
  runner: Run = run,
): Promise<{ python: string; minor: number } | { tried: string[] }> {
  const tried: string[] = [];
  for (const py of candidates) {
    const r = await runner(py, ['-c', 'import sys, platform; print(platform.python_implementation(), sys.version_info[0], sys.version_info[1])'], {
      timeout: 15_000,
    });
    const m = /^(\w+) (\d+) (\d+)/.exec(r.out.trim());
    if (r.code !== 0 || !m) {
      tried.push(`${py} (does not run)`);
      continue;
    }
    const [, impl, major, minor] = m;
    if (impl !== 'CPython' || Number(major) !== 3 || Number(minor) < MIN_MINOR) {
      tried.push(`${py} (${impl} ${major}.${minor}: needs CPython 3.${MIN_MINOR} or later)`);
      continue;
    }
    if (!pythons.includes(`3.${minor}`)) {
      tried.push(`${py} (3.${minor}: this .vsix carries the server for CPython ${pythons.join(', ')})`);
      continue;
    }
    return { python: py, minor: Number(minor) };
  }
  return { tried };
}

/** Where the venv for a bundle and a Python minor lives; its rewind-ls. */
export function venvPaths(storage: string, bundle: Bundle, minor: number): { dir: string; exe: string; done: string } {
  const dir = path.join(storage, `server-${bundle.version}-py3.${minor}`);
  return { dir, exe: path.join(dir, BIN, `rewind-ls${EXE}`), done: path.join(dir, '.rewind-installed') };
}

/**
 * The hook command for a bundled venv (`exe`: its rewind-ls) by a path that stays valid across extension updates:
 * `server-current-py3.N`, a link to the newest bundle's venv for that Python minor (`linkCurrent`), run the way
 * `rewind-ls install` writes hooks (`python -I -S .../rewind_ls/__main__.py hook AGENT`: no `site`). Undefined
 * when `exe` is not a bundled venv's (POSIX layout only).
 */
export function stableHookCommand(exe: string, agent: string): string | undefined {
  const dir = path.dirname(path.dirname(exe));
  const minor = /^server-.+-py3\.(\d+)$/.exec(path.basename(dir))?.[1];
  if (!minor || process.platform === 'win32') return undefined;
  const current = path.join(path.dirname(dir), `server-current-py3.${minor}`);
  const main = path.join(current, 'lib', `python3.${minor}`, 'site-packages', 'rewind_ls', '__main__.py');
  if (!fs.existsSync(main)) return undefined;
  const q = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
  return `${q(path.join(current, BIN, 'python'))} -I -S ${q(main)} hook ${agent}`;
}

/** Points `server-current-py3.N` at `dir` (replaced atomically: a hook running meanwhile sees one or the other). */
function linkCurrent(storage: string, dir: string, minor: number): void {
  if (process.platform === 'win32') return;
  const current = path.join(storage, `server-current-py3.${minor}`);
  const temp = `${current}.${process.pid}`;
  fs.rmSync(temp, { force: true });
  fs.symlinkSync(path.basename(dir), temp);
  fs.renameSync(temp, current);
}

/**
 * The rewind-ls of the bundle, installed first when needed: `python -m venv --without-pip DIR` (Debian's python3
 * has no ensurepip without python3-venv), then pip run from its wheel installs rewind-ls from bundled/wheels only
 * (`--isolated --no-index`: no network, no pip configuration of the person's). A marker written last says the
 * venv is complete; a half-made one (a crash, a kill) is made again. Two windows at once: a lock folder.
 * Venvs of other versions stay: agent hooks written with them keep working.
 */
export async function ensureInstalled(
  bundle: Bundle,
  storage: string,
  python: string,
  minor: number,
  log: (line: string) => void,
  runner: Run = run,
): Promise<string> {
  const { dir, exe, done } = venvPaths(storage, bundle, minor);
  if (fs.existsSync(done) && fs.existsSync(exe)) {
    linkCurrent(storage, dir, minor);
    return exe;
  }
  fs.mkdirSync(storage, { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (fs.existsSync(done)) return exe;
      // A lock older than the longest install is left from a crash.
      const age = Date.now() - fs.statSync(lock, { throwIfNoEntry: false })!.mtimeMs;
      if (age > 10 * 60_000) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`another window holds ${lock}: waited 5 minutes`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    if (fs.existsSync(done) && fs.existsSync(exe)) return exe;
    fs.rmSync(dir, { recursive: true, force: true });
    log(`installing the bundled rewind-ls ${bundle.version} into ${dir} with ${python}`);
    const venv = await runner(python, ['-m', 'venv', '--without-pip', dir], { timeout: 120_000 });
    if (venv.code !== 0) throw new Error(`${python} -m venv ${dir} failed: ${venv.out.trim()}`);
    const venvPython = path.join(dir, BIN, `python${EXE}`);
    const pip = await runner(
      venvPython,
      [
        path.join(bundle.pipWheel, 'pip'),
        'install',
        '--isolated',
        '--no-index',
        '--find-links',
        bundle.wheels,
        '--no-cache-dir',
        '--disable-pip-version-check',
        '--no-warn-script-location',
        '--quiet',
        `rewind-ls==${bundle.version}`,
      ],
      { timeout: 300_000 },
    );
    if (pip.code !== 0) {
      throw new Error(`installing the bundled wheels into ${dir} failed (Python 3.${minor}): ${pip.out.trim()}`);
    }
    if (!fs.existsSync(exe)) throw new Error(`pip finished but ${exe} is missing`);
    fs.writeFileSync(done, `${bundle.version}\n`);
    linkCurrent(storage, dir, minor);
    log(`installed ${exe}`);
    return exe;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
