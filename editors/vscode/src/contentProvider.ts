// Read-only `rewind:` documents: a file's content at a turn, from rewind/fileAt (the left side of diffs),
// and the timeline (rewind:/.rewind-timeline, from rewind/timeline), which is synced to the server for its
// code lenses.
import * as vscode from 'vscode';
import { type FileAtResult, Methods, type TimelineResult } from './protocol';
import type { RewindServer } from './server';

export const SCHEME = 'rewind';

/** rewind:/<path>?turn=…&side=before|after|absent&uri=… (the path keeps the file name for the language mode). */
export function rewindUri(turnId: string, fileUri: string, side: 'before' | 'after' | 'absent', path: string): vscode.Uri {
  const query = new URLSearchParams({ turn: turnId, side, uri: fileUri }).toString();
  return vscode.Uri.from({ scheme: SCHEME, path: '/' + path.replace(/^\/+/, ''), query });
}

export const TIMELINE_PATH = '/.rewind-timeline';
export const TIMELINE_URI = vscode.Uri.from({ scheme: SCHEME, path: TIMELINE_PATH });
/** The timeline's document selector entry: the server sees it (its lenses), no other `rewind:` document. */
export const TIMELINE_SELECTOR = { scheme: SCHEME, pattern: '**/.rewind-timeline' };
/** Fire to have VS Code fetch the timeline again. */
export const timelineChanged = new vscode.EventEmitter<vscode.Uri>();

export class RewindContentProvider implements vscode.TextDocumentContentProvider {
  readonly onDidChange = timelineChanged.event;

  constructor(private readonly server: RewindServer) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (uri.path === TIMELINE_PATH) {
      return (await this.server.request<TimelineResult>(Methods.timeline, {})).text;
    }
    const q = new URLSearchParams(uri.query);
    const side = q.get('side');
    if (side === 'absent') return '';
    const result = await this.server.request<FileAtResult>(Methods.fileAt, {
      turnId: q.get('turn') ?? '',
      uri: q.get('uri') ?? '',
      side: side === 'after' ? 'after' : 'before',
    });
    if (!result.exists) return '';
    if (result.binary) return '(binary file: not shown)';
    if (result.tooLarge) return '(file too large: not recorded)';
    return result.text ?? '';
  }
}
