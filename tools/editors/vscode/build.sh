#!/bin/sh
# build.sh OUTDIR — packages the VS Code extension into OUTDIR/bext.vsix:
# copies this folder to OUTDIR (the source tree gets no node_modules),
# installs exactly the committed package-lock.json (`npm ci`), tests the
# grammar with vscode-textmate against the lexer's keywords and every
# .bext file of the tree, packages with @vscode/vsce, and checks what the
# .vsix holds.  Install it with `code --install-extension OUTDIR/bext.vsix`.
#
# Needs Node.js and npm (make deps installs Debian's nodejs and npm where
# none is present) and the npm registry.  Exit 77 = skipped (no node/npm).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:?usage: build.sh OUTDIR}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "skipped: Node.js/npm not found (make deps installs Debian's nodejs and npm)"
  exit 77
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
# The sources only; node_modules comes from the lockfile, not from a
# developer's checkout.
for f in package.json package-lock.json extension.js language-configuration.json \
         README.md .vscodeignore; do
  cp "$here/$f" "$out/"
done
rm -rf "$out/syntaxes" "$out/test"
cp -R "$here/syntaxes" "$here/test" "$out/"

cd "$out"
# The cache stays in the build tree; --ignore-scripts: nothing here needs an
# install script (vsce-sign's fetches a signing tool that packaging does not use).
npm_config_cache="$out/.npm-cache" npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
node test/grammar.test.js "$root"
rm -f bext.vsix
npx --no-install vsce package --skip-license --allow-missing-repository --out bext.vsix
node test/vsix.test.js bext.vsix
