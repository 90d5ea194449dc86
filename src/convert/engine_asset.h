/* Moved to src/io/engine_store.h; kept for the tests that include it by its old path. */
#include "io/engine_store.h"
