#pragma once
// libfccp's CSV reader (Debian's libfccp-dev), included through here only. It copies file names with
// strncpy into fixed buffers, and GCC flags that as possible truncation (-Wstringop-truncation) when it
// inlines the header into our code; marking the header SYSTEM does not help, since the warning comes
// after inlining. The truncation is intended (error messages only), so it is silenced for this header.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>  // IWYU pragma: export
#pragma GCC diagnostic pop
