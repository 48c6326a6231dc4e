// The "Turn Files" view (in the Rewind view container): the workspace as it was at a turn, folder by folder
// (rewind/listFolder), each file opening read-only from the `rewind-turn:` file system. What "Open Workspace at
// Turn..." shows in a window of one folder: adding a second folder there makes VS Code reload the window into a
// workspace, and code-server reopened it with no folder in about one run of three.
import * as vscode from 'vscode';
import { type ListFolderResult, Methods, type TurnInfo } from './protocol';
import type { RewindServer } from './server';
import { turnFolderUri } from './turnFileSystem';

interface Item {
  path: string; // relative to the workspace, '' for its root
  folder: boolean;
}

export class TurnTree implements vscode.TreeDataProvider<Item>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Item | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** The turn shown, if any. */
  turn: TurnInfo | undefined;
  readonly view: vscode.TreeView<Item>;

  constructor(private readonly server: RewindServer) {
    this.view = vscode.window.createTreeView('rewind.turnFiles', { treeDataProvider: this, showCollapseAll: true });
  }

  /** Shows `turn`'s workspace in the view and reveals it. */
  async show(turn: TurnInfo): Promise<void> {
    this.turn = turn;
    this.view.title = `Turn #${turn.number} Files (start, read-only)`;
    this.view.description = turn.prompt.replace(/\s+/g, ' ').slice(0, 60);
    await vscode.commands.executeCommand('setContext', 'rewind.turnFilesShown', true);
    this.changed.fire(undefined);
    await vscode.commands.executeCommand('rewind.turnFiles.focus');
  }

  getTreeItem(item: Item): vscode.TreeItem {
    const name = item.path.split('/').pop() ?? item.path;
    const uri = this.turn ? turnFolderUri(this.turn.id).with({ path: '/' + item.path }) : undefined;
    const tree = new vscode.TreeItem(name, item.folder ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    tree.resourceUri = uri;
    tree.contextValue = item.folder ? 'rewind.turnFolder' : 'rewind.turnFile';
    if (!item.folder && uri) tree.command = { command: 'vscode.open', title: 'Open', arguments: [uri, { preview: true }] };
    return tree;
  }

  async getChildren(item?: Item): Promise<Item[]> {
    const turn = this.turn;
    if (!turn) return [];
    const folder = item?.path ?? '';
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString().replace(/\/+$/, '') ?? '';
    const params =
      folder === '' ? { turnId: turn.id } : { turnId: turn.id, uri: root + '/' + folder.split('/').map(encodeURIComponent).join('/') };
    const listing = await this.server.request<ListFolderResult>(Methods.listFolder, params);
    return listing.entries.map((e) => ({ path: folder === '' ? e.name : `${folder}/${e.name}`, folder: e.folder }));
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
