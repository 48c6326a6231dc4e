// Entry point: wires the language server, the palette commands, the `rewind:` documents and the status bar.
import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { fileHistory } from './fileHistory';
import { Commands } from './commands';
import { RewindContentProvider, SCHEME } from './contentProvider';
import { LatestTurnDecorations, reviewTurn, showTurnChanges } from './review';
import { baselineMessage, currentTurnCount, errorText, statusText } from './format';
import { confirmLensRestore } from './lensConfirm';
import { type RestoreOptions, type Scope, ServerCommands } from './protocol';
import { RewindServer } from './server';
import { TimelinePanel } from './timelinePanel';
import { TURN_SCHEME, TurnFileSystem, findFileInTurn, openTurnFolder } from './turnFileSystem';
import { TurnTree } from './turnTree';
import { BASELINE_POLL_MS, type Node, TurnsView } from './view';

const SCOPES: readonly string[] = ['code', 'conversation', 'both'];

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Rewind');
  // Set once the server object exists (the middleware needs the commands, the commands need the server).
  const ref: { commands?: Commands } = {};

  // The server's own commands (what its code lenses run) go through the same flow as the palette: preview,
  // conflict choice, saving of the documents that were clean. rewind.diff opens VS Code's diff editor.
  const middleware: Middleware = {
    executeCommand: async (command, args: unknown[], next): Promise<unknown> => {
      const commands = ref.commands;
      if (!commands) return next(command, args) as unknown;
      const turnId = typeof args[0] === 'string' ? args[0] : undefined;
      switch (command) {
        case ServerCommands.rewind: {
          const scope = typeof args[1] === 'string' && SCOPES.includes(args[1]) ? (args[1] as Scope) : undefined;
          if (!(await confirmLensRestore(server, turnId, scope ?? 'code', 'rewind'))) return undefined;
          return commands.rewindToTurn(turnId, scope);
        }
        case ServerCommands.revert:
          if (!(await confirmLensRestore(server, turnId, 'code', 'revert'))) return undefined;
          return commands.revertTurn(turnId);
        case ServerCommands.undo:
          return commands.undoLastRewind((args[0] as RestoreOptions | undefined) ?? {});
        case ServerCommands.diff:
          return commands.compareTurn(turnId, typeof args[1] === 'string' ? args[1] : undefined);
        // The code actions: through the extension's flow too, so the reverted document is saved like after
        // every other restore, and the preview is the same quick pick.
        case ServerCommands.revertHunk:
          if (typeof args[2] !== 'number') return next(command, args) as unknown; // the server says what is wrong
          return commands.revertChange(turnId, typeof args[1] === 'string' ? args[1] : undefined, args[2]);
        case ServerCommands.revertInFile:
          return commands.revertChange(turnId, typeof args[1] === 'string' ? args[1] : undefined);
        default:
          return next(command, args) as unknown;
      }
    },
  };

  const server = new RewindServer(output, middleware, context.extensionPath, context.globalStorageUri.fsPath);
  const cmds = new Commands(server);
  ref.commands = cmds;

  const guard =
    (fn: () => Promise<void>) =>
    async (): Promise<void> => {
      try {
        await fn();
      } catch (e) {
        void vscode.window.showErrorMessage(`Rewind: ${errorText(e)}`);
      }
    };

  const view = new TurnsView(
    (params) => cmds.listTurns(params),
    output,
    (message) => {
      tree.message = message;
    },
  );
  const tree = vscode.window.createTreeView('rewind.turns', { treeDataProvider: view, showCollapseAll: true });
  const onNode =
    (fn: (node: Node) => Promise<void>) =>
    async (node?: Node): Promise<void> => {
      if (!node) return;
      try {
        await fn(node);
      } catch (e) {
        void vscode.window.showErrorMessage(`Rewind: ${errorText(e)}`);
      }
    };

  const turnTree = new TurnTree(server);
  const timeline = new TimelinePanel(server, cmds, (turn) => openTurnFolder(turn, (t) => turnTree.show(t)));
  const status = vscode.window.createStatusBarItem('rewind.turns', vscode.StatusBarAlignment.Left, 10);
  status.name = 'Rewind';
  status.command = 'rewind.rewindToTurn';
  const STATUS_TOOLTIP = 'Rewind: turns of the current agent session. Click to rewind.';
  status.tooltip = STATUS_TOOLTIP;
  let refreshTimer: NodeJS.Timeout | undefined;
  // Set while the first checkpoint runs in the background: the status bar asks again until it is done.
  let pollTimer: NodeJS.Timeout | undefined;
  const refreshStatus = (): void => {
    if (refreshTimer) clearTimeout(refreshTimer);
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = undefined;
    refreshTimer = setTimeout(() => {
      refreshTimer = undefined;
      if (!vscode.workspace.getConfiguration('rewind').get<boolean>('statusBar.enabled', true)) {
        status.hide();
        return;
      }
      if (!server.running) return;
      cmds.listTurns({ limit: 1 }).then(
        (list) => {
          status.text = statusText(currentTurnCount(list), list.baseline);
          status.tooltip = baselineMessage(list.baseline) ?? STATUS_TOOLTIP;
          status.show();
          if (list.baseline) pollTimer = setTimeout(refreshStatus, BASELINE_POLL_MS);
        },
        (e) => output.appendLine(`status bar: ${errorText(e)}`),
      );
    }, 150);
  };

  context.subscriptions.push(
    output,
    server,
    status,
    { dispose: () => pollTimer && clearTimeout(pollTimer) },
    server.onDidChangeTurns(refreshStatus),
    view,
    tree,
    server.onDidChangeTurns(() => view.refresh()),
    vscode.commands.registerCommand('rewind.view.refresh', () => view.refresh()),
    vscode.commands.registerCommand(
      'rewind.view.rewind',
      onNode(async (n) => {
        if (n.kind === 'turn' || n.kind === 'file') await cmds.rewindToTurn(n.turn.id);
      }),
    ),
    vscode.commands.registerCommand(
      'rewind.view.revert',
      onNode(async (n) => {
        if (n.kind === 'turn' || n.kind === 'file') await cmds.revertTurn(n.turn.id);
      }),
    ),
    vscode.commands.registerCommand(
      'rewind.view.diff',
      onNode(async (n) => {
        if (n.kind === 'turn' || n.kind === 'file') await cmds.compareTurn(n.turn.id, n.kind === 'file' ? n.file.uri : undefined);
      }),
    ),
    vscode.commands.registerCommand(
      'rewind.view.undoRestore',
      onNode(async (n) => {
        if (n.kind === 'turn' && n.turn.sessionKind === 'rewind') await cmds.undoRestore(n.turn);
      }),
    ),
    vscode.commands.registerCommand(
      'rewind.view.rewindFile',
      onNode(async (n) => {
        if (n.kind === 'file') await cmds.rewindFile(n.turn, n.file);
      }),
    ),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('rewind.statusBar') && refreshStatus()),
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, new RewindContentProvider(server)),
    vscode.commands.registerCommand('rewind.rewindToTurn', guard(() => cmds.rewindToTurn())),
    vscode.commands.registerCommand('rewind.revertTurn', guard(() => cmds.revertTurn())),
    vscode.commands.registerCommand('rewind.undoLastRewind', guard(() => cmds.undoLastRewind())),
    vscode.commands.registerCommand('rewind.compareTurn', guard(() => cmds.compareTurn())),
    vscode.commands.registerCommand('rewind.openTimeline', guard(() => cmds.openTimeline())),
    vscode.commands.registerCommand('rewind.fileHistory', guard(() => fileHistory(server))),
    vscode.commands.registerCommand('rewind.restartServer', guard(async () => void (await server.restart()))),
    vscode.commands.registerCommand('rewind.showOutput', () => output.show()),
    vscode.commands.registerCommand(
      'rewind.setUpHooks',
      async (agent?: unknown): Promise<void> => {
        const agents = ['claude-code', 'codex', 'gemini'];
        try {
          const chosen =
            typeof agent === 'string' && agents.includes(agent)
              ? agent
              : await vscode.window.showQuickPick(agents, { placeHolder: 'The agent whose hooks to set up in this project' });
          if (!chosen) return;
          // The hook command names this machine's rewind-ls by its path: a file the team commits is the
          // wrong home for it unless everyone's path is the same. Claude Code has a per-person file.
          let local = false;
          if (chosen === 'claude-code') {
            const where = await vscode.window.showQuickPick(
              [
                {
                  label: 'Just for me',
                  description: '.claude/settings.local.json (not committed; it names this machine\'s rewind-ls)',
                  local: true,
                },
                {
                  label: 'For everyone on the project',
                  description: '.claude/settings.json (committed with the project)',
                  local: false,
                },
              ],
              // Kept open when the focus moves (a walkthrough's button leaves it on the walkthrough's page).
              { title: 'Set up the Claude Code hooks', placeHolder: 'Which settings file the hooks go into', ignoreFocusOut: true },
            );
            if (!where) return;
            local = where.local;
          }
          await server.installHooks(chosen, local);
        } catch (e) {
          void vscode.window.showErrorMessage(`Rewind: ${errorText(e)}`);
        }
      },
    ),
    // The timeline picture (issue #41): src/timelinePanel.ts.
    timeline,
    vscode.commands.registerCommand('rewind.showTimelinePicture', guard(() => timeline.show())),
    // Browse a turn read-only (issue #41): src/turnFileSystem.ts, src/turnTree.ts.
    turnTree,
    vscode.workspace.registerFileSystemProvider(TURN_SCHEME, new TurnFileSystem(server), { isCaseSensitive: true, isReadonly: true }),
    vscode.commands.registerCommand(
      'rewind.openTurnFolder',
      guard(async () => {
        const turn = await cmds.pickTurn('Open Workspace at Turn (read-only, as it was when the turn began)');
        if (turn) await openTurnFolder(turn, (t) => turnTree.show(t));
      }),
    ),
    vscode.commands.registerCommand(
      'rewind.findFileInTurn',
      guard(() => findFileInTurn(server, turnTree.turn, () => cmds.pickTurn('Find a File in the Workspace at Turn'))),
    ),
    vscode.commands.registerCommand(
      'rewind.view.openTurnFolder',
      onNode(async (n) => {
        if (n.kind === 'turn') await openTurnFolder(n.turn, (t) => turnTree.show(t));
      }),
    ),
    // Review (issue #28): src/review.ts.
    vscode.commands.registerCommand('rewind.reviewTurn', guard(() => reviewTurn(server, cmds))),
    vscode.commands.registerCommand('rewind.showTurnChanges', guard(() => showTurnChanges(cmds))),
    vscode.commands.registerCommand(
      'rewind.view.showTurnChanges',
      onNode(async (n) => {
        if (n.kind === 'turn' || n.kind === 'file') await showTurnChanges(cmds, n.turn);
      }),
    ),
    new LatestTurnDecorations(server, () => cmds.listTurns()),
  );

  if (vscode.workspace.workspaceFolders?.length) {
    void server.start();
  }
}

export function deactivate(): void {
  // The server is disposed with the extension's subscriptions.
}
