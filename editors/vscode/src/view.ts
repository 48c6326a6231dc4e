// The Rewind view in the activity bar: sessions > turns > files, with inline actions (rewind, revert, diff,
// rewind one file). It reads rewind/listTurns a page at a time (the newest turns of each session, then
// "Older turns…" on demand) and refreshes on rewind/didChangeTurns.
import * as vscode from 'vscode';
import { baselineMessage, errorText, fileNames, formatTime, hereTurnId, promptSummary, sessionTitle, TURN_PAGE, turnName, withOlderPage, hereMark } from './format';
import type { FileChange, ListTurnsParams, ListTurnsResult, SessionInfo, TurnInfo } from './protocol';

export type Node =
  | { kind: 'session'; session: SessionInfo; current: boolean }
  | { kind: 'turn'; turn: TurnInfo; here?: boolean }
  | { kind: 'file'; turn: TurnInfo; file: FileChange }
  | { kind: 'more'; session: SessionInfo };

/** The command the "Older turns…" node runs (registered by the view itself). */
export const LOAD_OLDER_COMMAND = 'rewind.view.loadOlderTurns';

const MARK = { created: 'A', modified: 'M', deleted: 'D' } as const;
const CHANGE_WORD = { created: 'created', modified: 'modified', deleted: 'deleted' } as const;

/** Sessions as the picker orders them: the current one first, then by latest activity; restore points last. */
function orderedSessions(list: ListTurnsResult): { session: SessionInfo; current: boolean }[] {
  const sessions = list.sessions.filter((s) => s.kind !== 'rewind' && s.turns.length > 0);
  const current = sessions.find((s) => s.id === list.currentSessionId);
  const others = sessions.filter((s) => s !== current).sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
  const restores = list.sessions.filter((s) => s.kind === 'rewind' && s.turns.length > 0);
  return [
    ...(current ? [{ session: current, current: true }] : []),
    ...others.map((s) => ({ session: s, current: false })),
    ...restores.map((s) => ({ session: s, current: false })),
  ];
}

// How often the view and the status bar ask again while the first checkpoint runs in the background.
export const BASELINE_POLL_MS = 2000;

export class TurnsView implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  // Older pages the person opened, kept across refreshes (a refresh reloads only the newest page).
  private readonly older: ListTurnsResult[] = [];
  private readonly command: vscode.Disposable;
  // The row of the current state ("you are here"), from the last listing.
  private here: string | undefined;
  // Set while the first checkpoint runs: the next refresh (the view polls until it is done).
  private poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly load: (params?: ListTurnsParams) => Promise<ListTurnsResult>,
    private readonly output: vscode.OutputChannel,
    // The view's message line (TreeView.message): the first checkpoint's progress, or none.
    private readonly showMessage: (text: string | undefined) => void = () => undefined,
  ) {
    this.command = vscode.commands.registerCommand(LOAD_OLDER_COMMAND, (node: Node) => this.loadOlder(node));
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  dispose(): void {
    if (this.poll) clearTimeout(this.poll);
    this.command.dispose();
    this.changed.dispose();
  }

  private async loadOlder(node: Node): Promise<void> {
    if (node.kind !== 'more' || !node.session.olderCursor) return;
    try {
      this.older.push(await this.load({ limit: TURN_PAGE, sessionId: node.session.id, before: node.session.olderCursor }));
      this.refresh();
    } catch (e) {
      this.output.appendLine(`Rewind view: ${errorText(e)}`);
    }
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      let list: ListTurnsResult;
      try {
        list = this.older.reduce(withOlderPage, await this.load({ limit: TURN_PAGE }));
      } catch (e) {
        this.output.appendLine(`Rewind view: ${errorText(e)}`);
        return [];
      }
      this.here = hereTurnId(list);
      this.showMessage(baselineMessage(list.baseline));
      if (list.baseline && !this.poll) {
        this.poll = setTimeout(() => {
          this.poll = undefined;
          this.refresh();
        }, BASELINE_POLL_MS);
      }
      return orderedSessions(list).map(({ session, current }) => ({ kind: 'session', session, current }));
    }
    if (node.kind === 'session') {
      const turns: Node[] = [...node.session.turns]
        .sort((a, b) => b.number - a.number)
        .map((turn) => ({ kind: 'turn', turn }));
      return node.session.olderCursor ? [...turns, { kind: 'more', session: node.session }] : turns;
    }
    if (node.kind === 'turn') return node.turn.files.map((file) => ({ kind: 'file', turn: node.turn, file }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case 'session': {
        const item = new vscode.TreeItem(
          node.current ? `current session · ${sessionTitle(node.session)}` : sessionTitle(node.session),
          node.current ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
        );
        item.id = `session:${node.session.id}`;
        item.contextValue = 'rewind.session';
        item.iconPath = new vscode.ThemeIcon(node.session.kind === 'agent' ? 'comment-discussion' : node.session.kind === 'rewind' ? 'discard' : 'edit');
        return item;
      }
      case 'turn': {
        const t = node.turn;
        const agent = t.sessionKind === 'agent';
        const item = new vscode.TreeItem(
          agent
            ? `${turnName(t)} ${promptSummary(t.prompt, 60)}`
            : t.sessionKind === 'rewind' || t.files.length === 0
              ? turnName(t)
              : `${turnName(t)} ${fileNames(t.files)}`,
          t.files.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
        );
        const here = t.id === this.here ? `${hereMark(t)} · ` : '';
        item.id = `turn:${t.id}`;
        item.description = `${here}${formatTime(t.startedAt)} · ${t.files.length} ${t.files.length === 1 ? 'file' : 'files'}`;
        item.tooltip = new vscode.MarkdownString().appendText(`${turnName(t)} · ${formatTime(t.startedAt)}\n\n${t.prompt}`);
        item.contextValue = t.files.length > 0 ? 'rewind.turn' : 'rewind.turn.empty';
        item.iconPath = new vscode.ThemeIcon(agent ? 'history' : 'save');
        if (t.sessionKind === 'rewind') {
          // A restore point: what the files held just before a rewind, revert or undo; its row undoes that restore.
          item.label = `Before ${promptSummary(t.prompt, 60)}`;
          item.tooltip = new vscode.MarkdownString().appendText(
            `Restore point · ${formatTime(t.startedAt)}\n\nWhat the files held just before ${t.prompt}. Undo This Restore puts them back.`,
          );
          item.contextValue = 'rewind.restorePoint';
          item.iconPath = new vscode.ThemeIcon('discard');
        }
        if (here) item.iconPath = new vscode.ThemeIcon('location');
        return item;
      }
      case 'more': {
        const left = node.session.turnCount - node.session.turns.length;
        const item = new vscode.TreeItem(`Older turns… (${left} more)`, vscode.TreeItemCollapsibleState.None);
        item.id = `more:${node.session.id}:${node.session.olderCursor ?? ''}`;
        item.iconPath = new vscode.ThemeIcon('history');
        item.command = { command: LOAD_OLDER_COMMAND, title: 'Load Older Turns', arguments: [node] };
        return item;
      }
      case 'file': {
        const f = node.file;
        const item = new vscode.TreeItem(vscode.Uri.parse(f.uri), vscode.TreeItemCollapsibleState.None);
        item.id = `file:${node.turn.id}:${f.uri}`;
        item.label = f.path;
        item.description = MARK[f.change];
        item.tooltip = `${f.path}: ${CHANGE_WORD[f.change]} in ${turnName(node.turn)} (click: compare with the current file)`;
        item.contextValue = 'rewind.file';
        item.command = { command: 'rewind.view.diff', title: 'Compare with Current', arguments: [node] };
        return item;
      }
    }
  }
}
