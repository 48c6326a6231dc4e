// A turn of the workspace as a read-only folder: `rewind-turn://<side>.<turnId>/<path>`, the workspace as it was
// at the start (side "before") or the end ("after") of the turn. A FileSystemProvider backed by the server's
// rewind/listFolder (folders) and rewind/fileAt (contents); "Open Workspace at Turn..." adds such a folder to the
// window beside the workspace, so the Explorer, Go to File, search and "Compare with..." work inside it. Nothing is
// ever written: the provider is registered read-only and every write is refused.
// (A scheme of its own: `rewind:` is the content provider's, for single documents and the timeline.)
import * as vscode from 'vscode';
import { errorText } from './format';
import { type FileAtResult, type ListFolderResult, Methods, type TurnInfo } from './protocol';
import type { RewindServer } from './server';

export const TURN_SCHEME = 'rewind-turn';
type Side = 'before' | 'after';

/** The folder URI of `turn`'s workspace at its start (or end). */
export function turnFolderUri(turnId: string, side: Side = 'before'): vscode.Uri {
  return vscode.Uri.from({ scheme: TURN_SCHEME, authority: `${side}.${turnId}`, path: '/' });
}

/** turn id, side and workspace-relative path ('' for the root) of a `rewind-turn:` URI. */
export function parseTurnUri(uri: vscode.Uri): { turnId: string; side: Side; path: string } {
  const dot = uri.authority.indexOf('.');
  const side = uri.authority.slice(0, dot);
  if (dot < 0 || (side !== 'before' && side !== 'after')) throw vscode.FileSystemError.FileNotFound(uri);
  return { turnId: uri.authority.slice(dot + 1), side, path: uri.path.replace(/^\/+|\/+$/g, '') };
}

export class TurnFileSystem implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  // Listings asked for again while the Explorer, quick open or search walk the folder: kept for a short while
  // (a past turn never changes; its files' listing is only asked again after the store moved).
  private readonly listings = new Map<string, { at: number; result: Promise<ListFolderResult> }>();
  private static readonly KEEP_MS = 5000;

  constructor(private readonly server: RewindServer) {}

  private list(uri: vscode.Uri): Promise<ListFolderResult> {
    const { turnId, side, path } = parseTurnUri(uri);
    const key = `${side}.${turnId}/${path}`;
    const kept = this.listings.get(key);
    if (kept && Date.now() - kept.at < TurnFileSystem.KEEP_MS) return kept.result;
    const params = path === '' ? { turnId, side } : { turnId, side, uri: this.fileUri(turnId, path) };
    const result = this.server.request<ListFolderResult>(Methods.listFolder, params).catch((e: unknown) => {
      this.listings.delete(key);
      throw vscode.FileSystemError.FileNotFound(`${uri.toString()}: ${errorText(e)}`);
    });
    this.listings.set(key, { at: Date.now(), result });
    return result;
  }

  // The workspace's own file: URI of a path (the server names files by their place in the workspace).
  private roots = new Map<string, string>();
  private fileUri(turnId: string, path: string): string {
    const root = this.roots.get(turnId) ?? vscode.workspace.workspaceFolders?.[0]?.uri.toString() ?? '';
    return root.replace(/\/+$/, '') + '/' + path.split('/').map(encodeURIComponent).join('/');
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const { turnId, path } = parseTurnUri(uri);
    if (path === '') {
      const root = await this.list(uri);
      this.roots.set(turnId, root.uri);
      return { type: vscode.FileType.Directory, ctime: 0, mtime: Date.parse(root.startedAt) || 0, size: 0, permissions: vscode.FilePermission.Readonly };
    }
    const parent = uri.with({ path: '/' + path.split('/').slice(0, -1).join('/') });
    const name = path.split('/').pop() ?? '';
    const listing = await this.list(parent);
    const entry = listing.entries.find((e) => e.name === name);
    if (!entry) throw vscode.FileSystemError.FileNotFound(uri);
    return {
      type: entry.folder ? vscode.FileType.Directory : vscode.FileType.File,
      ctime: 0,
      mtime: Date.parse(listing.startedAt) || 0,
      size: entry.size,
      permissions: vscode.FilePermission.Readonly,
    };
  }

  async readDirectory(uri: vscode.Uri): Promise<[string, vscode.FileType][]> {
    const listing = await this.list(uri);
    return listing.entries.map((e) => [e.name, e.folder ? vscode.FileType.Directory : vscode.FileType.File]);
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const { turnId, side, path } = parseTurnUri(uri);
    if (!this.roots.has(turnId)) await this.stat(uri.with({ path: '/' }));
    let result: FileAtResult;
    try {
      result = await this.server.request<FileAtResult>(Methods.fileAt, { turnId, uri: this.fileUri(turnId, path), side });
    } catch (e) {
      throw vscode.FileSystemError.FileNotFound(`${uri.toString()}: ${errorText(e)}`);
    }
    if (!result.exists) throw vscode.FileSystemError.FileNotFound(uri);
    if (result.binary) return new TextEncoder().encode('(binary file: not shown)\n');
    if (result.tooLarge) return new TextEncoder().encode('(file too large: not recorded)\n');
    return new TextEncoder().encode(result.text ?? '');
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  private refuse(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(`${uri.toString()}: a past turn is read-only`);
  }
  createDirectory(uri: vscode.Uri): void {
    this.refuse(uri);
  }
  writeFile(uri: vscode.Uri): void {
    this.refuse(uri);
  }
  delete(uri: vscode.Uri): void {
    this.refuse(uri);
  }
  rename(uri: vscode.Uri): void {
    this.refuse(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** "Open Workspace at Turn...": in a window that is a multi-root workspace, the turn's folder is added after the
 * others (the first folder stays, so the language server keeps its root) and the Explorer shows it. In a window of
 * one folder, adding one would make VS Code reload the window into a workspace (which code-server reopened with no
 * folder in about one run of three): `single` shows the turn in the Turn Files view instead. */
export async function openTurnFolder(turn: TurnInfo, single: (turn: TurnInfo) => Promise<void>, side: Side = 'before'): Promise<void> {
  const uri = turnFolderUri(turn.id, side);
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (vscode.workspace.workspaceFile === undefined) {
    await single(turn);
    return;
  }
  if (!folders.some((f) => f.uri.toString() === uri.toString())) {
    const name = `Turn #${turn.number} (${side === 'before' ? 'start' : 'end'}, read-only)`;
    if (!vscode.workspace.updateWorkspaceFolders(folders.length, 0, { uri, name })) {
      throw new Error(`could not add ${uri.toString()} to the window`);
    }
  }
  await vscode.commands.executeCommand('workbench.view.explorer');
}

/** "Find File in Turn...": Go to File for turn folders (VS Code's own does not search other file systems). Every
 * file of the turn folders open in the window and of the turn in the Turn Files view (`shown`), or of a turn picked
 * when there is none, then the one picked opens. */
export async function findFileInTurn(
  server: RewindServer,
  shown: TurnInfo | undefined,
  pickTurn: () => Promise<TurnInfo | undefined>,
): Promise<void> {
  let folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === TURN_SCHEME).map((f) => ({ uri: f.uri, name: f.name }));
  if (shown) folders.push({ uri: turnFolderUri(shown.id), name: `Turn #${shown.number}` });
  if (folders.length === 0) {
    const turn = await pickTurn();
    if (!turn) return;
    // The file opens read-only from the turn without adding its folder to the window.
    folders = [{ uri: turnFolderUri(turn.id), name: `Turn #${turn.number}` }];
  }
  const items: (vscode.QuickPickItem & { uri: vscode.Uri })[] = [];
  for (const folder of folders) {
    const { turnId, side } = parseTurnUri(folder.uri);
    const listing = await server.request<ListFolderResult>(Methods.listFolder, { turnId, side, recursive: true });
    for (const e of listing.entries) {
      const slash = e.name.lastIndexOf('/');
      items.push({
        label: e.name.slice(slash + 1),
        description: `${slash < 0 ? '' : e.name.slice(0, slash)}  (${folder.name})`,
        uri: folder.uri.with({ path: '/' + e.name }),
      });
    }
  }
  const picked = await vscode.window.showQuickPick(items, { title: 'Find File in Turn', matchOnDescription: true, placeHolder: 'File name' });
  if (picked) await vscode.window.showTextDocument(picked.uri, { preview: true });
}
