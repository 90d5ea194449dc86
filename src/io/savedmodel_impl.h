/* Merged into src/io/savedmodel.h; kept for the tests that include it by its old path. */
#include "io/savedmodel.h"
