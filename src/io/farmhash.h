/* Moved to src/common/farmhash.h; kept for the tests that include it by its old path. */
#include "common/farmhash.h"
