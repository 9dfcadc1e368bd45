// Runtime is an interface; this file anchors its vtable in one translation unit.
#include "sim/runtime/runtime.hpp"
