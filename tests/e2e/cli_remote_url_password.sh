#!/usr/bin/env bash
# A password in a --remote-cache URL (http://USER:PASSWORD@HOST/..., sent as Basic
# authentication) is never echoed by a usage error, as the loader's messages never print it
# (docs/remote-cache.md): --no-cache with a remote, a URL given twice, a scheme pto does not
# have, --remote-cache on a cache command other than ls --remote, an option (or a command name)
# that is not one but carries a URL. Each still names the URL, with the password as ***.
source "$(dirname "$0")/lib/common.bash"
U=http://farm:hunter2@127.0.0.1:9/pto
S=http://farm:***@127.0.0.1:9/pto
export PTO_CACHE_DIR="$T/cache"
unset PTO_REMOTE_CACHE
check() { # check TEXT ARGS...: exit 2, TEXT in the message, no password
  local text=$1
  shift
  run_pto 2 "$@" && expect_out "$text"
  expect_true "no password in: pto $*" test "$(grep -c hunter2 <<<"$OUT")" = 0
}
for cmd in compile run bench; do
  check "--remote-cache $S with --no-cache" $cmd "$EX/add.ptir" --no-cache --remote-cache "$U"
  check "--remote-cache given twice: '$S' and '${S}2'" $cmd "$EX/add.ptir" \
    --remote-cache "$U" --remote-cache "${U}2"
done
check "--remote-cache ftp://farm:***@h/: not an http://" compile "$EX/add.ptir" \
  --remote-cache ftp://farm:hunter2@h/
check "--remote-cache farm:***@h/x: not an http://" cache ls --remote --remote-cache farm:hunter2@h/x
check "--remote-cache $S: only with ls --remote" cache stats --remote-cache "$U"
check "--remote-cache given twice: '$S' and '${S}2'" cache ls --remote --remote-cache "$U" \
  --remote-cache "${U}2"
for cmd in trace build-id fmt rebuild check; do
  check "unknown option '--remote-cache=$S'" $cmd --remote-cache="$U"
done
check "'--remote-cache=$S' is not a pto command" help --remote-cache="$U"
check "'$S' is not a pto command" "$U"
# A URL typed without its scheme is masked as a word of its own, wherever a message quotes it.
check "--remote-cache farm:***@h: not an http://" compile "$EX/add.ptir" \
  --remote-cache farm:hunter2@h
check "unknown option '--remote-cache=farm:***@h'" fmt --remote-cache=farm:hunter2@h
check "'farm:***@h' is not a pto command" farm:hunter2@h
# ... and in the loader's warning about $PTO_REMOTE_CACHE (the compile itself goes on).
PTO_REMOTE_CACHE=farm:hunter2@h run_pto 0 compile "$EX/add.ptir" -o "$T/w" &&
  expect_out "remote cache 'farm:***@h': not an http://"
expect_true "no password in the loader's warning" test "$(grep -c hunter2 <<<"$OUT")" = 0
# Text that only looks like a URL keeps its bytes: a path with a '/' before its '@'.
check "unknown option '--x=a://b@c'" fmt --x=a://b@c
run_pto 2 fmt "$T/no/a:b@c.ptir" && expect_out "$T/no/a:b@c.ptir"
run_pto 2 fmt no/a:b@c.ptir && expect_out "no/a:b@c.ptir"
# A bare a:b@c cannot be told from a URL without its scheme: it is masked.
run_pto 2 fmt a:b@c && expect_out "a:***@c"
finish
