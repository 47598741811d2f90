#!/bin/sh
# pto-man.sh PTO OUT: writes the man page pto(1) to OUT from the built command's own help texts
# (`pto --help`, then `pto COMMAND --help` for every command it lists), so the page says exactly
# what --help says. Run by the build whenever pto is relinked (the top CMakeLists.txt: pto_man).
set -eu
pto=$1
out=$2
tmp="$out.tmp"

# roff-safe preformatted text: backslashes escaped, a leading . or ' protected.
esc() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

version=$("$pto" --version | sed -n '1s/^pto \([^ ]*\).*/\1/p')
cmds=$("$pto" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$cmds" ] || { echo "pto-man.sh: no commands in '$pto --help'" >&2; exit 1; }
{
  printf '.TH PTO 1 "" "pto %s" "User Commands"\n' "$version"
  printf '.SH NAME\npto \\- compile, cache and run tile-kernel programs (PTIR)\n'
  printf '.SH SYNOPSIS\n.B pto\n.I command\n.RI [ options ]\n.br\n.B pto\n.RB [ \\-\\-help | \\-\\-version ]\n'
  printf '.SH DESCRIPTION\n.nf\n'
  "$pto" --help | esc
  printf '.fi\n.SH COMMANDS\n'
  for c in $cmds; do
    printf '.SS "pto %s"\n.nf\n' "$c"
    "$pto" "$c" --help | esc
    printf '.fi\n'
  done
  printf '.SH EXIT STATUS\n0 success; 1 the job ran and failed (a check mismatch, a launch error); 2 bad usage or\nbad input (the message names the argument or the file position).\n'
  printf '.SH FILES\n.TP\n.I $PTO_CACHE_DIR, $XDG_CACHE_HOME/pto, ~/.cache/pto\nthe binary cache (the first that is set).\n'
  printf '.SH SEE ALSO\nThe language, command line, C and Python references in the docs/ folder of pto'"'"'s sources\n(docs/language.md, docs/cli.md, docs/c-api.md, docs/python.md).\n'
} >"$tmp"
mv "$tmp" "$out"
