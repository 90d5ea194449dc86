/* Moved to src/common/highwayhash.h; kept for the tests that include it by its old path. */
#include "common/highwayhash.h"
