// The commit Facewire was built from, as the package manifest found it (Package.swift: Context.gitInformation).
#pragma once

/// The commit's hash (40 hex digits), or "unknown" when built outside a git checkout (a source archive).
const char *fw_build_commit(void);
/// 1 when the checkout had uncommitted changes, else 0.
int fw_build_dirty(void);
