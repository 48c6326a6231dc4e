// The language server's lifecycle: resolve the command, start, restart when the setting changes, explain
// start failures. Everything else talks to the server through `RewindServer.request`.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CloseAction,
  CodeLensRequest,
  ErrorAction,
  type ErrorHandler,
  LanguageClient,
  type LanguageClientOptions,
  type Middleware,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { ensureInstalled, findBundle, pickPython, run, stableHookCommand } from './bundledServer';
import { TIMELINE_SELECTOR } from './contentProvider';
import { errorText } from './format';
import { type DidChangeTurnsParams, Methods } from './protocol';
import {
  describeStartError,
  displayCommand,
  findOnPath,
  machineProbe,
  notFoundMessage,
  resolveServerCommand,
  type ServerCommand,
  startFailureMessage,
  type UseBundled,
} from './serverCommand';

/** What we use of the Python extension's API (ms-python.python). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: { getExecutionDetails(resource?: vscode.Uri): { execCommand?: string[] } };
}

/** The Python extension's API, when that extension is installed (activated on the way). */
async function pythonExtensionApi(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    return (ext.isActive ? ext.exports : await ext.activate()) as PythonApi;
  } catch {
    return undefined;
  }
}

/** The interpreter selected in the Python extension for `folder`. */
function pythonInterpreter(api: PythonApi, folder: vscode.Uri | undefined): string | undefined {
  try {
    return api.environments?.getActiveEnvironmentPath(folder)?.path ?? api.settings?.getExecutionDetails(folder)?.execCommand?.[0];
  } catch {
    return undefined;
  }
}

/** True when rewind.server.command names a command (then discovery is not used). */
function hasCommandSetting(setting: unknown): boolean {
  return setting !== null && setting !== undefined && setting !== '' && !(Array.isArray(setting) && setting.length === 0);
}

/** A LanguageClient that leaves the start-failure notification to us (ours says how to fix it). */
class RewindLanguageClient extends LanguageClient {
  public override error(message: string, data?: unknown, showNotification?: boolean | 'force'): void {
    if (message.includes("couldn't create connection to server") || message.startsWith('Server initialization failed')) {
      showNotification = false;
    }
    super.error(message, data, showNotification);
  }
}

export class RewindServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<boolean> | undefined;
  private readonly turnsChanged = new vscode.EventEmitter<DidChangeTurnsParams | undefined>();
  /** Fired on rewind/didChangeTurns, after a restore, and when the server (re)starts. */
  readonly onDidChangeTurns = this.turnsChanged.event;
  private readonly disposables: vscode.Disposable[] = [];
  private generation = 0;

  /** The command the running (or last started) server came from: the hooks are set up with the same one. */
  private current: ServerCommand | undefined;

  constructor(
    readonly output: vscode.OutputChannel,
    private readonly middleware: Middleware,
    private readonly extensionPath: string,
    private readonly storagePath: string,
  ) {
    this.disposables.push(
      this.turnsChanged,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('rewind.server') || e.affectsConfiguration('rewind.summarizer')) {
          this.output.appendLine('rewind.server.* or rewind.summarizer changed: restarting the language server');
          void this.restart();
        }
      }),
    );
  }

  fireTurnsChanged(params?: DidChangeTurnsParams): void {
    this.turnsChanged.fire(params);
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** Starts the server if it is not running; true when it runs. */
  start(): Promise<boolean> {
    if (this.running) return Promise.resolve(true);
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  async restart(): Promise<boolean> {
    await this.stop();
    return this.start();
  }

  async stop(): Promise<void> {
    this.generation++;
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.dispose(2000);
      } catch (e) {
        this.output.appendLine(`stopping the language server: ${errorText(e)}`);
      }
    }
  }

  private async resolveCommand(): Promise<ServerCommand | { notFound: string[] }> {
    const setting = vscode.workspace.getConfiguration('rewind').get<unknown>('server.command');
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const api = hasCommandSetting(setting) ? undefined : await pythonExtensionApi();
    if (api) this.followPythonInterpreter(api);
    const interpreter = api ? pythonInterpreter(api, folder) : undefined;
    const bundle = findBundle(this.extensionPath);
    const found = resolveServerCommand(setting, machineProbe(folder?.fsPath, interpreter, bundle !== undefined));
    if (!('bundled' in found)) return found;
    if (!bundle) return { notFound: found.looked };
    return this.bundledCommand(found, interpreter);
  }

  /** The server this extension carries, installed on first use with the person's Python (bundledServer.ts). */
  private async bundledCommand(found: UseBundled, interpreter: string | undefined): Promise<ServerCommand | { notFound: string[] }> {
    const bundle = findBundle(this.extensionPath)!;
    const candidates = [interpreter, findOnPath('python3', process.env.PATH), findOnPath('python', process.env.PATH)].filter(
      (p, i, all): p is string => !!p && all.indexOf(p) === i,
    );
    const picked = await pickPython(candidates, bundle.pythons);
    if ('tried' in picked) {
      const tried = picked.tried.length > 0 ? picked.tried.join('; ') : 'no python3 or python on PATH';
      return { notFound: [...found.looked, `the bundled server needs a CPython ${bundle.pythons.join(', ')} (${tried})`] };
    }
    const exe = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Rewind: setting up the bundled rewind-ls ${bundle.version} (first start)` },
      () => ensureInstalled(bundle, this.storagePath, picked.python, picked.minor, (line) => this.output.appendLine(line)),
    );
    return { command: exe, args: ['serve'], origin: 'bundled' };
  }

  /** Runs `rewind-ls install AGENT` in the workspace with the server's own rewind-ls: hooks and editor share it. */
  async installHooks(agent: string, local = false): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) throw new Error('open a folder first: the hooks go into its agent settings');
    if (!(await this.start()) || !this.current) throw new Error('the rewind-ls language server is not running (see Output › Rewind)');
    const cmd = this.current;
    // The bundled server's venv is versioned: the hooks run it through a link that follows extension updates.
    const stable = cmd.origin === 'bundled' ? stableHookCommand(cmd.command, agent) : undefined;
    const install = ['install', agent, ...(local ? ['--local'] : []), ...(stable ? ['--command', stable] : []), '-C', folder];
    const args = cmd.args[cmd.args.length - 1] === 'serve' ? [...cmd.args.slice(0, -1), ...install] : undefined;
    if (!args) throw new Error(`cannot tell how to run "install" with \`${displayCommand(cmd)}\`: run rewind-ls install ${agent} in a terminal`);
    const exe = findOnPath(cmd.command, process.env.PATH) ?? cmd.command;
    this.output.appendLine(`setting up the hooks: ${displayCommand({ command: exe, args })}`);
    const r = await run(exe, args, { timeout: 60_000 });
    this.output.appendLine(r.out.trimEnd());
    if (r.code !== 0) throw new Error(`rewind-ls install ${agent} failed (exit ${r.code}): ${r.out.trim().split('\n').pop() ?? ''}`);
    // The CLI's first line is "<settings file>: added …": name the file relative to the project.
    const file = /^(.+?): /.exec(r.out.trim())?.[1];
    const where = file ? ` in ${path.relative(folder, file) || file}` : '';
    void vscode.window.showInformationMessage(`Rewind: ${agent} hooks set up${where}; they run ${exe}, as the editor does.`);
  }

  private followingPython = false;

  /**
   * The person picks another interpreter in the Python extension (e.g. after our start error): discovery runs
   * again, as it does when rewind.server.command changes. Not while that setting names the command.
   */
  private followPythonInterpreter(api: PythonApi): void {
    const onChange = api.environments?.onDidChangeActiveEnvironmentPath;
    if (this.followingPython || !onChange) return;
    this.followingPython = true;
    this.disposables.push(
      onChange(() => {
        if (hasCommandSetting(vscode.workspace.getConfiguration('rewind').get<unknown>('server.command'))) return;
        this.output.appendLine("the Python extension's interpreter changed: restarting the language server");
        void this.restart();
      }),
    );
  }

  private async doStart(): Promise<boolean> {
    const generation = this.generation;
    let found: ServerCommand | { notFound: string[] };
    try {
      found = await this.resolveCommand();
    } catch (e) {
      this.showStartError(`Rewind: ${errorText(e)}`);
      return false;
    }
    if (generation !== this.generation) return false;
    if ('notFound' in found) {
      this.showStartError(notFoundMessage(found.notFound));
      return false;
    }
    const cmd = found;
    this.current = cmd;
    const env = { ...(vscode.workspace.getConfiguration('rewind').get<Record<string, string>>('server.env') ?? {}) };
    const summarizer = vscode.workspace.getConfiguration('rewind').get<string>('summarizer', '');
    if (summarizer) env.REWIND_LS_SUMMARIZER = summarizer;
    if (findOnPath(cmd.command, process.env.PATH) === undefined) {
      // Reached only for a command from the setting: discovery returns commands that exist.
      this.showStartError(startFailureMessage(cmd, `"${cmd.command}" was not found`));
      return false;
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, ...env } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, TIMELINE_SELECTOR],
      // didChangeTurns: the server sends rewind/didChangeTurns only to clients that ask for it.
      initializationOptions: { closedFiles: 'server', didChangeTurns: true, restoreUnsaved: true },
      outputChannel: this.output,
      middleware: this.middleware,
      // Without a handler the client shows the raw error ("Pending response rejected since connection got
      // disposed") next to ours; ours says what to do.
      initializationFailedHandler: () => false,
    };
    this.output.appendLine(`starting: ${displayCommand(cmd)} (${cmd.origin})`);
    const state = { ran: false };
    clientOptions.errorHandler = this.errorHandler(state);
    const client = new RewindLanguageClient('rewind', 'Rewind', serverOptions, clientOptions);
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) state.ran = true;
    });
    client.onNotification(Methods.didChangeTurns, (params: DidChangeTurnsParams) => {
      this.refreshCodeLenses(client);
      this.turnsChanged.fire(params);
    });
    this.client = client;
    let startError: unknown;
    try {
      await client.start();
    } catch (e) {
      startError = e ?? 'unknown error';
    }
    if (generation !== this.generation) return false;
    // start() can resolve although the server died during initialization (the client stopped itself).
    if (startError !== undefined || !client.isRunning()) {
      this.client = undefined;
      const why = startError !== undefined ? errorText(startError) : 'the server exited while starting';
      this.showStartError(startFailureMessage(cmd, describeStartError(why)));
      void client.dispose(1000).catch(() => undefined);
      return false;
    }
    this.output.appendLine('language server running');
    this.clearStartError();
    this.turnsChanged.fire(undefined);
    return true;
  }

  /**
   * A server that never got running is not restarted (the start fails at once and we say why); one that ran
   * and crashed is restarted like vscode-languageclient does by default (at most 4 times in 3 minutes).
   */
  private errorHandler(state: { ran: boolean }): ErrorHandler {
    const restarts: number[] = [];
    return {
      // Handled: the client's own toast ("connection to server is erroring. write EPIPE") says nothing a
      // person can act on; a server that never ran gets our start error, one that ran is restarted below.
      error: (error, _message, count) => {
        this.output.appendLine(`connection error: ${errorText(error)}`);
        if (!state.ran) return { action: ErrorAction.Shutdown, handled: true };
        return { action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
      },
      closed: () => {
        if (!state.ran) return { action: CloseAction.DoNotRestart, handled: true };
        const now = Date.now();
        restarts.push(now);
        while (restarts.length > 0 && now - restarts[0] > 3 * 60 * 1000) restarts.shift();
        if (restarts.length <= 4) return { action: CloseAction.Restart };
        return {
          action: CloseAction.DoNotRestart,
          message: 'The rewind-ls server crashed 5 times in 3 minutes and will not be restarted: see Output › Rewind.',
        };
      },
    };
  }

  /** True while a start error is shown (VS Code has no API to close one notification: see clearStartError). */
  private startErrorShown = false;

  private showStartError(message: string): void {
    this.output.appendLine(message);
    this.startErrorShown = true;
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output', 'Retry').then((choice) => {
      this.startErrorShown = false;
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'rewind.server.command');
      } else if (choice === 'Show Output') {
        this.output.show();
      } else if (choice === 'Retry') {
        void this.restart();
      }
    });
  }

  /**
   * The server runs now: the start error still on screen is stale. VS Code cannot close one notification from
   * an extension, so the toasts are hidden (they stay in the notification centre) and the Output says why.
   */
  private clearStartError(): void {
    if (!this.startErrorShown) return;
    this.startErrorShown = false;
    this.output.appendLine('the earlier start error is fixed: hiding its notification');
    void vscode.commands.executeCommand('notifications.hideToasts');
  }

  /** Makes VS Code ask for the code lenses of the visible editors again. */
  private refreshCodeLenses(client: LanguageClient): void {
    try {
      const feature = client.getFeature(CodeLensRequest.method);
      for (const editor of vscode.window.visibleTextEditors) {
        feature.getProvider(editor.document)?.onDidChangeCodeLensEmitter.fire();
      }
    } catch (e) {
      this.output.appendLine(`code lens refresh: ${errorText(e)}`);
    }
  }

  /** A request to the server, starting it first when needed. Throws with the server's message on errors. */
  async request<R>(method: string, params: object): Promise<R> {
    if (!(await this.start()) || !this.client) {
      throw new Error('the rewind-ls language server is not running (see Output › Rewind)');
    }
    return this.client.sendRequest<R>(method, params);
  }

  /** An LSP WorkspaceEdit (JSON) as VS Code's, with the running client's converter. */
  async asWorkspaceEdit(edit: object): Promise<vscode.WorkspaceEdit | undefined> {
    if (!this.client) return undefined;
    return this.client.protocol2CodeConverter.asWorkspaceEdit(edit as never);
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }
}
