/* gn_version(): the version include/grapnel/version.h gives, the one place
 * it is written (CMakeLists.txt, the CUDA module and the Python package read
 * it from there or from this call). */
#include "grapnel/grapnel.h"

const char *gn_version(void) { return GN_VERSION_STRING; }
