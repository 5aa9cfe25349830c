// extension.js — starts bext-lsp for .bext files (stdio) through
// vscode-languageclient.  Everything the editor shows comes from the server.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const cfg = vscode.workspace.getConfiguration('bext');
  const command = cfg.get('server.path', 'bext-lsp');
  const args = [];
  for (const dir of cfg.get('server.includeDirs', [])) args.push('-I', dir);
  client = new LanguageClient(
    'bext', 'bext-lsp',
    { command, args },   // stdio is the default transport
    { documentSelector: [{ scheme: 'file', language: 'bext' }, { scheme: 'untitled', language: 'bext' }] });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
