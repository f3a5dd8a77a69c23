#include "CBuildInfo.h"

#ifndef FW_COMMIT
#define FW_COMMIT "unknown"
#endif
#ifndef FW_DIRTY
#define FW_DIRTY 0
#endif

const char *fw_build_commit(void) { return FW_COMMIT; }
int fw_build_dirty(void) { return FW_DIRTY; }
