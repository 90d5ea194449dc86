/* Moved to src/opdef/registry.h; kept for the tests that include it by its old path. */
#include "opdef/registry.h"
