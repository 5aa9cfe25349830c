// grammar.test.js — the TextMate grammar as VS Code runs it: vscode-textmate
// with the Oniguruma regex engine (the same two libraries the editor uses),
// over lines whose scopes are asserted, over the lexer's keyword list and
// the IR's topology builtins (so the grammar cannot drift from the
// language's one home of each), and over every .bext file in the tree.
//
//   node test/grammar.test.js REPO_ROOT
//
// Exit status 0 when every check holds; each failure is printed.
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.resolve(process.argv[2] || path.join(__dirname, '..', '..', '..', '..'));
const grammarPath = path.join(__dirname, '..', 'syntaxes', 'bext.tmLanguage.json');
let failures = 0, checks = 0;
function check(ok, what) {
  checks++;
  if (!ok) { failures++; console.error('FAIL: ' + what); }
}

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => scope === 'source.bext'
      ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath) : null,
  });
  return registry.loadGrammar('source.bext');
}

// Tokens of a text, line by line: [{text, scopes}], plus `open`: whether a
// scope is still open at the end (a probe line `fn probe` after the text
// must come out as plain code).
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const out = [];
  for (const line of text.split('\n')) {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) out.push({ text: line.substring(t.startIndex, t.endIndex), scopes: t.scopes });
    stack = r.ruleStack;
  }
  const probe = grammar.tokenizeLine('fn probe', stack).tokens[0];
  return { tokens: out, open: probe.scopes.join(' ') !== 'source.bext keyword.other.fn.bext' };
}

// The innermost scope of the first token whose text is `text`.
function scopeOf(tokens, text) {
  const t = tokens.find((t) => t.text === text);
  return t ? t.scopes[t.scopes.length - 1] : '(no token "' + text + '")';
}

// Lines of .bext and what chosen tokens in them must be.
const CASES = [
  ['/// Doc comment on an item', '/// Doc comment on an item', 'comment.line.documentation.bext'],
  ['let y = x; // trailing', '// trailing', 'comment.line.double-slash.bext'],
  ['#[backend_extension(Cube, Flex)]', 'backend_extension', 'entity.name.function.attribute.bext'],
  ['#[fusion(dtype = x.dtype, shape = x.shape)]', 'fusion', 'entity.name.function.attribute.bext'],
  ['#[fusion(dtype = x.dtype, shape = x.shape)]', '#[', 'punctuation.definition.attribute.bext'],
  ['pub trait Activations: Backend {', 'trait', 'keyword.other.bext'],
  ['pub trait Activations: Backend {', 'Activations', 'entity.name.type.bext'],
  ['pub trait Activations: Backend {', 'Backend', 'support.type.builtin.bext'],
  ['    fn gelu(x: FloatTensor<Self>) -> FloatTensor<Self>;', 'gelu', 'entity.name.function.bext'],
  ['    fn gelu(x: FloatTensor<Self>) -> FloatTensor<Self>;', 'FloatTensor', 'support.type.builtin.bext'],
  ['    fn gelu(x: FloatTensor<Self>) -> FloatTensor<Self>;', 'Self', 'variable.language.self.bext'],
  ['fn k<F: Float>(input: &Tensor<F>, output: &mut Tensor<F>) {', 'Tensor', 'support.type.builtin.bext'],
  ['fn k<F: Float>(input: &Tensor<F>, output: &mut Tensor<F>) {', 'Float', 'support.type.builtin.bext'],
  ['    if ABSOLUTE_POS < output.len() {', 'if', 'keyword.control.bext'],
  ['    if ABSOLUTE_POS < output.len() {', 'ABSOLUTE_POS', 'support.constant.topology.bext'],
  ['    if ABSOLUTE_POS < output.len() {', 'len', 'entity.name.function.call.bext'],
  ['let h = x * 0.7071067811865476;', '0.7071067811865476', 'constant.numeric.float.bext'],
  ['let n = 1024u32 + 0x1F;', '1024u32', 'constant.numeric.integer.bext'],
  ['let n = 1024u32 + 0x1F;', '0x1F', 'constant.numeric.integer.bext'],
  ['let t: f16 = a as bf16;', 'f16', 'support.type.primitive.bext'],
  ['let t: f16 = a as bf16;', 'bf16', 'support.type.primitive.bext'],
  ['let t: f16 = a as bf16;', 'as', 'keyword.other.bext'],
  ['let s = "a \\" b";', '\\"', 'constant.character.escape.bext'],
  ['let ok = true;', 'true', 'constant.language.bool.bext'],
  ['use std::shape;', 'use', 'keyword.other.bext'],
];

// The keywords the lexer recognizes (grammar/lexer.re: `"kw" { kind = TK_..`).
function lexerKeywords() {
  const src = fs.readFileSync(path.join(root, 'grammar', 'lexer.re'), 'utf8');
  const kws = [];
  for (const m of src.matchAll(/^\s*"([a-z_]+)"\s*\{\s*kind\s*=\s*TK_/gm)) kws.push(m[1]);
  return kws;
}

// The topology builtins (runtime/kir/bxk.h: BXK_TOPOS, `X(ENUM, spelling)`).
function topologyBuiltins() {
  const src = fs.readFileSync(path.join(root, 'runtime', 'kir', 'bxk.h'), 'utf8');
  const start = src.indexOf('#define BXK_TOPOS(X)');
  const end = src.indexOf('\n\n', start);
  return [...src.substring(start, end).matchAll(/X\(\s*\w+\s*,\s*(\w+)\s*\)/g)].map((m) => m[1]);
}

function bextFiles(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('build')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) bextFiles(p, out);
    else if (e.name.endsWith('.bext')) out.push(p);
  }
  return out;
}

async function main() {
  const grammar = await loadGrammar();
  check(grammar !== null, 'the grammar loads as source.bext');

  for (const [line, text, scope] of CASES) {
    const got = scopeOf(tokenize(grammar, line).tokens, text);
    check(got === scope, `${JSON.stringify(line)}: "${text}" is ${got}, expected ${scope}`);
  }

  // A block comment stays open across lines and closes.
  const block = tokenize(grammar, 'a /* one\ntwo */ fn f');
  check(scopeOf(block.tokens, 'two ') === 'comment.block.bext', 'a block comment spans lines');
  check(scopeOf(block.tokens, 'fn') === 'keyword.other.fn.bext', 'code after a block comment is code');
  check(!block.open, 'a closed block comment leaves nothing open');
  check(tokenize(grammar, 'a /* never closed').open, 'an unclosed block comment is seen as open');
  check(tokenize(grammar, '#[fusion(dtype = x').open, 'an unclosed attribute is seen as open');

  const kws = lexerKeywords();
  check(kws.length >= 20, `lexer.re has its keyword rules (found ${kws.length})`);
  for (const kw of kws) {
    const s = scopeOf(tokenize(grammar, kw + ' ').tokens, kw);
    check(/^(keyword\.|constant\.language\.)/.test(s), `lexer keyword "${kw}" is ${s}, not a keyword scope`);
  }

  const topo = topologyBuiltins();
  check(topo.length >= 20, `bxk.h lists the topology builtins (found ${topo.length})`);
  for (const t of topo) {
    const s = scopeOf(tokenize(grammar, 'let p = ' + t + ';').tokens, t);
    check(s === 'support.constant.topology.bext', `topology builtin ${t} is ${s}`);
  }

  // Every .bext file of the tree tokenizes and ends with nothing open (an
  // unterminated string, comment or attribute would colour the rest).
  const files = bextFiles(path.join(root, 'samples'), bextFiles(path.join(root, 'stdlib'), []));
  check(files.length >= 10, `found the tree's .bext files (${files.length})`);
  for (const f of files) {
    const r = tokenize(grammar, fs.readFileSync(f, 'utf8'));
    check(!r.open, `${path.relative(root, f)} ends with a scope left open`);
  }

  console.log(`${checks - failures}/${checks} grammar checks hold (${files.length} .bext files tokenized)`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
