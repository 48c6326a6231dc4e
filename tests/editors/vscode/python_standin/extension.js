// A stand-in for the Python extension (ms-python.python) in the VS Code end-to-end test: the real one is
// not installable offline. It offers the API shape the Rewind extension uses (src/server.ts, PythonApi): the
// selected interpreter is the python.defaultInterpreterPath setting, and changing it fires the change event
// as selecting an interpreter does in the real extension.
const vscode = require('vscode');

exports.activate = function activate(context) {
  const changed = new vscode.EventEmitter();
  const current = () => vscode.workspace.getConfiguration('python').get('defaultInterpreterPath') || 'python';
  context.subscriptions.push(
    changed,
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('python.defaultInterpreterPath')) changed.fire({ id: current(), path: current() });
    }),
  );
  return {
    environments: {
      getActiveEnvironmentPath: () => ({ id: current(), path: current() }),
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
};
