/* pto rebuild: rebuild the binaries that hand edits made stale in a work dir. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pto/manifest.h"

int cmd_rebuild(int argc, char **argv) {
  const char *cmd = "rebuild";
  const char *dir = NULL, *entry = NULL;
  int operands = 0; /* after "--", no argument is an option */
  for (int i = 1; i < argc; i++) {
    if (!operands && !strcmp(argv[i], "--")) {
      operands = 1;
      continue;
    }
    if (operands) {
      if (dir) return cli_usage_error(cmd, "one work dir at a time: '%s' and '%s'", dir, argv[i]);
      dir = argv[i];
      continue;
    }
    if (!strcmp(argv[i], "--orch-entry") || !strncmp(argv[i], "--orch-entry=", 13)) {
      const char *v = argv[i][12] == '=' ? argv[i] + 13 : cli_next_value(argc, argv, &i);
      if (!v || !*v) return cli_usage_error(cmd, "--orch-entry needs the entry's symbol name");
      if (cli_set_once(cmd, "--orch-entry", &entry, v)) return PTO_EXIT_USAGE;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
    if (dir) return cli_usage_error(cmd, "one work dir at a time: '%s' and '%s'", dir, argv[i]);
    dir = argv[i];
  }
  if (!dir) return cli_usage_error(cmd, "no work dir given");
  if (!cli_is_dir(dir)) return cli_usage_error(cmd, "%s is not a directory", dir);
  int rebuilt = 0;
  int lock = cli_lock_dir(cmd, dir, 1); /* not while a pto compile -o writes it */
  /* The entry recorded before, put back when the new one names no function of the rebuilt
   * orchestration: a rebuild that says it succeeded leaves a dir that loads. */
  char *old_entry = NULL;
  int had_entry = 0;
  pto_status s = PTO_OK;
  if (entry) {
    pto_manifest m;
    s = pto_manifest_read(dir, &m);
    if (!s) {
      had_entry = 1;
      old_entry = m.orch_entry_symbol ? strdup(m.orch_entry_symbol) : NULL;
      pto_manifest_free(&m);
    }
  }
  if (!s && entry) s = pto_program_set_orch_entry(dir, entry);
  if (!s) s = pto_program_rebuild_dir(dir, &rebuilt);
  if (!s && entry) {
    pto_program *p = NULL;
    s = pto_program_load_dir(dir, &p);
    pto_program_release(p);
    if (s && had_entry) {
      pto_status r = pto_program_set_orch_entry(dir, old_entry);
      if (r) {
        pto_status_free(s);
        s = r;
      } else {
        s = pto_status_annotate(s, "--orch-entry %s refused, the entry symbol stays %s", entry,
                                old_entry ? old_entry : "aicpu_orchestration_entry");
      }
    }
  }
  free(old_entry);
  if (lock >= 0) close(lock);
  if (s) return cli_fail(cmd, s);
  if (entry) printf("%s: orchestration entry %s\n", dir, entry);
  if (rebuilt)
    printf("%s: rebuilt %d file%s\n", dir, rebuilt, rebuilt == 1 ? "" : "s");
  else
    printf("%s: up to date\n", dir);
  return PTO_EXIT_OK;
}

const pto_cmd cli_cmd_rebuild = {
    "rebuild", "rebuild what hand edits made stale in a work dir",
    "usage: pto rebuild DIR [--orch-entry NAME]\n"
    "\n"
    "Rebuilds exactly the binaries of the work dir DIR (made by 'pto compile ... -o DIR') whose\n"
    "sources were edited since they were compiled: an edited orchestration/<entry>.cpp gives a\n"
    "new orchestration/<entry>.so; an edited kernels/<kernel>.ll a new kernels/<kernel>.o and a\n"
    "relinked kernels/kernels.so. A binary that is missing or does not match its recorded hash is\n"
    "rebuilt from its source too. The new content hashes, Build-IDs and hids are recorded in\n"
    "DIR/manifest.json, which is written last. When nothing changed, nothing is rebuilt.\n"
    "'pto run DIR' does the same before loading (unless PTO_NO_REBUILD=1).\n"
    "\n"
    "options:\n"
    "  --orch-entry NAME  the orchestration's entry symbol is NAME (an extern \"C\" function\n"
    "                taking const ChipTaskArgs&), for a hand-written orchestration that names its\n"
    "                entry otherwise; recorded in DIR/manifest.json (orchestration.entry_symbol)\n"
    "                and used by every later load (default aicpu_orchestration_entry; --entry of\n"
    "                'pto compile' stays the PTIR entry function). Checked by loading DIR after\n"
    "                the rebuild: a NAME the orchestration does not export is refused (exit 2)\n"
    "                and the entry recorded before is kept\n"
    "\n"
    "example:\n"
    "  pto compile examples/chain.ptir -o out/chain\n"
    "  $EDITOR out/chain/orchestration/main.cpp\n"
    "  pto rebuild out/chain\n",
    cmd_rebuild};
