// "Open in Terminal" for a forked conversation: the resume command typed once, at the shell's prompt.
import * as vscode from 'vscode';

/** How long to wait for the shell to be ready (shell integration) before typing anyway. */
const READY_MS = 10000;

/** The shell-integration API of VS Code 1.93+ (the extension supports older versions: looked up at run time). */
interface ShellIntegrationApi {
  onDidChangeTerminalShellIntegration?: (listener: (e: { terminal: vscode.Terminal }) => void) => vscode.Disposable;
}

/**
 * A terminal in the workspace with `command` typed but not run (the person presses Enter, and can edit it
 * first). Typed once the shell reports it is ready: text sent before the prompt is echoed by the terminal
 * and again by the shell's line editor (the command showed twice).
 */
export async function openResumeTerminal(command: string): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const term = vscode.window.createTerminal({ name: 'Rewind: resume', cwd: folder?.uri });
  term.show();
  await term.processId;
  const subscribe = (vscode.window as unknown as ShellIntegrationApi).onDidChangeTerminalShellIntegration;
  const ready = (term as unknown as { shellIntegration?: unknown }).shellIntegration;
  if (!subscribe) {
    // No shell-integration API (VS Code before 1.93): give the shell time to print its prompt.
    await new Promise((resolve) => setTimeout(resolve, 2000));
  } else if (!ready) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        sub.dispose();
        clearTimeout(timer);
        resolve();
      };
      const sub = subscribe((e) => {
        if (e.terminal === term) setTimeout(done, 300);
      });
      const timer = setTimeout(done, READY_MS);
    });
  }
  term.sendText(command, false);
}
