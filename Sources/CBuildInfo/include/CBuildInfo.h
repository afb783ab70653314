#ifndef PURCHASE_LEDGER_BUILD_INFO_H
#define PURCHASE_LEDGER_BUILD_INFO_H

/// The release number kept in the repository's VERSION file, as the compiler read it (with its
/// trailing newline); never NULL.
const char *pl_build_release(void);

/// The version Tools/release stamped (`-Xcc -DPL_BUILD_VERSION=...`), or "" for a build that
/// was not stamped (a developer's `swift build`).
const char *pl_build_version(void);

/// The commit Tools/release stamped (`-Xcc -DPL_BUILD_COMMIT=...`), or "".
const char *pl_build_commit(void);

#endif
