// vsix.test.js — checks a packaged extension: a .vsix is a zip whose
// central directory must list the manifest, the grammar, the entry point
// and the language client the entry point requires (vsce packs runtime
// dependencies from node_modules; a missing one fails only when VS Code
// activates the extension).  Node has no zip reader, and the format's
// central directory is a few fixed fields, so it is read here directly.
//
//   node test/vsix.test.js FILE.vsix
'use strict';
const fs = require('fs');

function zipNames(buf) {
  // End of central directory: signature 0x06054b50, within the last 64 KiB + 22.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); i--)
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  if (eocd < 0) throw new Error('no end-of-central-directory record: not a zip file');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const names = [];
  for (let n = 0; n < count; n++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== 0x02014b50)
      throw new Error(`central directory entry ${n} is damaged`);
    const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30), commentLen = buf.readUInt16LE(p + 32);
    names.push(buf.toString('utf8', p + 46, p + 46 + nameLen));
    p += 46 + nameLen + extraLen + commentLen;
  }
  return names;
}

const file = process.argv[2];
const names = new Set(zipNames(fs.readFileSync(file)));
const pkg = JSON.parse(fs.readFileSync(require('path').join(__dirname, '..', 'package.json'), 'utf8'));
const must = [
  'extension.vsixmanifest',
  'extension/package.json',
  'extension/extension.js',
  'extension/language-configuration.json',
  'extension/syntaxes/bext.tmLanguage.json',
];
for (const dep of Object.keys(pkg.dependencies)) must.push(`extension/node_modules/${dep}/package.json`);
let bad = 0;
for (const m of must) if (!names.has(m)) { bad++; console.error(`FAIL: ${file} lacks ${m}`); }
for (const n of names) {
  if (n.startsWith('extension/test/') || n.startsWith('extension/.npm-cache/') || n.endsWith('.vsix')) { bad++; console.error(`FAIL: ${file} packs ${n}`); }
  for (const dev of Object.keys(pkg.devDependencies || {}))
    if (n.startsWith(`extension/node_modules/${dev}/`)) { bad++; console.error(`FAIL: ${file} packs the dev dependency ${dev}`); break; }
}
console.log(`${file}: ${names.size} entries, ${must.length} required present: ${bad ? 'NO' : 'yes'}`);
process.exit(bad ? 1 : 0);
