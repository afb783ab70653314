// The release number and the commit a binary was built from. The number is read from the
// repository's VERSION file at compile time (C23 #embed), so no second copy of it can drift.
// Tools/release writes the version it decided and the commit to `.build-stamp` (git-ignored)
// for the length of its build: a file rather than -D flags, since flags passed with -Xcc reach
// every module's compilation and a new commit would rebuild them all.
#include "CBuildInfo.h"

static const char release[] = {
#embed "../../VERSION"
    , 0
};

#if __has_embed("../../.build-stamp") == __STDC_EMBED_FOUND__
static const char stamp[] = {
#embed "../../.build-stamp"
    , 0
};
#else
static const char stamp[] = "";
#endif

const char *pl_build_release(void) { return release; }
const char *pl_build_stamp(void) { return stamp; }
