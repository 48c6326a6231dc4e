// The custom rewind/* protocol as TypeScript types. Mirrors rewind_ls/server/protocol.py (the source of
// truth; JSON Schemas in schemas/). Only what the extension reads is typed; extra fields are ignored.

export type Scope = 'code' | 'conversation' | 'both';
export type Mode = 'rewind' | 'revert';
export type ChangeKind = 'created' | 'modified' | 'deleted';
export type Action = 'create' | 'modify' | 'delete' | 'unchanged';
export type SessionKind = 'agent' | 'editor' | 'external' | 'rewind';
export type RestoreStatus = 'applied' | 'nothing-to-do' | 'conflict' | 'partial' | 'failed' | 'planned';

export interface FileChange {
  path: string;
  uri: string;
  change: ChangeKind;
  source?: string;
}

export interface TurnInfo {
  id: string;
  number: number;
  sessionId: string;
  sessionKind: SessionKind;
  prompt: string;
  startedAt: string;
  endedAt?: string | null;
  files: FileChange[];
}

export interface SessionInfo {
  id: string;
  kind: SessionKind;
  agent?: string | null;
  transcriptPath?: string | null;
  startedAt: string;
  lastActivityAt: string;
  turns: TurnInfo[];
}

export interface ListTurnsResult {
  workspace: string;
  currentSessionId: string | null;
  sessions: SessionInfo[];
}

export interface Conflict {
  kind: string;
  message: string;
}

export interface FilePreview {
  path: string;
  uri: string;
  action: Action;
  added: number;
  removed: number;
  binary?: boolean;
  conflict?: Conflict | null;
}

export interface ConversationPreview {
  available: boolean;
  reason?: string | null;
  prompt?: string | null;
}

export interface PreviewResult {
  turn: TurnInfo;
  mode: Mode;
  scope: Scope;
  files: FilePreview[];
  conflicts: number;
  conversation?: ConversationPreview | null;
}

export interface ConversationFork {
  sessionId: string;
  transcriptPath: string;
  resumeCommand: string;
  prompt: string;
}

export type SummarizeDirection = "from" | "upTo";

export interface SummarizeParams {
  turnId: string;
  direction: SummarizeDirection;
  instructions?: string | null;
}

export interface SummarizeResult {
  status: "applied";
  message: string;
  direction: SummarizeDirection;
  conversation: ConversationFork;
  prompt: string;
}

export interface RestoreOptions {
  force?: boolean;
  skipConflicts?: boolean;
}

export interface RestoreResult {
  status: RestoreStatus;
  message: string;
  restorePointId?: string | null;
  files: FilePreview[];
  writtenByServer?: string[];
  failed: string[];
  conversation?: ConversationFork | null;
  prompt?: string | null;
}

export interface FileAtResult {
  uri: string;
  exists: boolean;
  text?: string | null;
  binary?: boolean;
  tooLarge?: boolean;
}

export interface TimelineResult {
  uri: string;
  text: string;
}

export interface DidChangeTurnsParams {
  sessionIds: string[];
  reason: string;
}

export const Methods = {
  listTurns: 'rewind/listTurns',
  preview: 'rewind/preview',
  restore: 'rewind/restore',
  undo: 'rewind/undo',
  summarize: 'rewind/summarize',
  fileAt: 'rewind/fileAt',
  timeline: 'rewind/timeline',
  didChangeTurns: 'rewind/didChangeTurns',
} as const;

/** workspace/executeCommand commands of the server (also what its code lenses run). */
export const ServerCommands = {
  rewind: 'rewind.rewind',
  revert: 'rewind.revert',
  undo: 'rewind.undo',
  diff: 'rewind.diff',
} as const;
