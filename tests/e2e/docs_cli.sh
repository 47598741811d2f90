#!/usr/bin/env bash
# docs/cli.md and the man page against the built pto's own help: every command of `pto --help`
# has a "## pto COMMAND" section, every flag any --help names appears in docs/cli.md, every
# `pto cache` subcommand is described, and the generated pto(1) names every command.
source "$(dirname "$0")/lib/common.bash"
DOC="$PTO_SOURCE_DIR/docs/cli.md"
B=$(cd "$(dirname "$PTO")/.." && pwd)
expect_true "docs/cli.md exists" test -f "$DOC"

CMDS=$("$PTO" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
expect_true "pto --help lists commands" test -n "$CMDS"
missing=()
for c in $CMDS; do grep -qx "## pto $c" "$DOC" || missing+=("pto $c"); done
expect_true "docs/cli.md has a section per command (missing: ${missing[*]})" test ${#missing[@]} = 0

# Flags: any -x or --word token of a help text (after a space, a bracket, a bar or a comma).
flags() { grep -oE '(^|[][ (|,])--?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^[][ (|,]//' | sort -u; }
missing=()
for c in "" $CMDS; do
  # shellcheck disable=SC2086 # "" is pto --help itself
  for f in $("$PTO" $c --help | flags); do
    grep -qF -- "$f" "$DOC" || missing+=("${c:-pto}:$f")
  done
done
expect_true "docs/cli.md names every flag of --help (missing: ${missing[*]})" test ${#missing[@]} = 0

missing=()
for s in $("$PTO" cache --help | sed -n 's/^\(usage:\)\{0,1\} *pto cache \([a-z]*\).*/\2/p'); do
  grep -qF "pto cache $s" "$DOC" || missing+=("cache $s")
done
expect_true "docs/cli.md describes every cache subcommand (missing: ${missing[*]})" test ${#missing[@]} = 0

# The man page: built from the same help texts, so it names every command and renders.
MAN="$B/man/pto.1"
expect_true "the build made man/pto.1" test -f "$MAN"
missing=()
for c in $CMDS; do grep -qF "pto $c" "$MAN" || missing+=("$c"); done
expect_true "pto(1) names every command (missing: ${missing[*]})" test ${#missing[@]} = 0
if command -v groff >/dev/null; then
  OUT=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
  expect_true "pto(1) renders without warnings: $OUT" test -z "$OUT"
fi
# It says what --help says: the help of one command, line for line, is in the page's text.
if command -v man >/dev/null; then
  MANTEXT=$(MANWIDTH=200 man -l "$MAN" 2>/dev/null | sed 's/^ *//')
  missing=()
  while IFS= read -r line; do
    [ -n "$line" ] && ! grep -qF -- "$line" <<<"$MANTEXT" && missing+=("$line")
  done < <("$PTO" rebuild --help | sed 's/^ *//')
  expect_true "pto(1) holds pto rebuild --help (missing: ${missing[*]:0:3})" test ${#missing[@]} = 0
fi
# Nothing in the repository points outside it to the design notes it was built from.
PAT="shared""/design"
HITS=$(cd "$PTO_SOURCE_DIR" && grep -rIl --exclude-dir=.git --exclude-dir='build*' -e "\.\./shared" -e "$PAT" . 2>/dev/null)
expect_true "no file points outside the repository to the design notes (found in: $HITS)" test -z "$HITS"
# Nor names those notes by file: users have docs/language.md, docs/cli.md and docs/DESIGN.md.
# (Each pattern is split so this file does not match itself.)
NOTES=$(cd "$PTO_SOURCE_DIR" && grep -rIlw --exclude-dir=.git --exclude-dir='build*' \
  -e "PTIR""\.md" -e "CLI""\.md" -e "ARCHITECTURE""\.md" . 2>/dev/null)
expect_true "no file names the internal design notes (found in: $NOTES)" test -z "$NOTES"
finish
