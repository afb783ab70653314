#ifndef PURCHASE_LEDGER_BUILD_INFO_H
#define PURCHASE_LEDGER_BUILD_INFO_H

/// The release number kept in the repository's VERSION file, as the compiler read it (with its
/// trailing newline); never NULL.
const char *pl_build_release(void);

/// What Tools/release stamped for its build, `VERSION COMMIT` on one line, or "" for a build it
/// did not make (a developer's `swift build`); never NULL.
const char *pl_build_stamp(void);

#endif
