// The one source of the targets that build the shared precompiled headers (cmake/ExasimTargets.cmake):
// a static library needs a translation unit, and this is it.
namespace exasim::pch_anchor {}
