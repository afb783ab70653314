// The release number and the commit a binary was built from. The number is read from the
// repository's VERSION file at compile time (C23 #embed), so no second copy of it can drift;
// the commit, and a version with `+git.COMMIT`, come from Tools/release as macros, since a
// developer's build has no reason to know them.
#include "CBuildInfo.h"

#ifndef PL_BUILD_VERSION
#define PL_BUILD_VERSION ""
#endif
#ifndef PL_BUILD_COMMIT
#define PL_BUILD_COMMIT ""
#endif

static const char release[] = {
#embed "../../VERSION"
    , 0
};

const char *pl_build_release(void) { return release; }
const char *pl_build_version(void) { return PL_BUILD_VERSION; }
const char *pl_build_commit(void) { return PL_BUILD_COMMIT; }
