#pragma once
// The report page's hand-written CSS and JavaScript, inlined into every page (no file beside it, no
// network). The error trap runs first: it records window errors, unhandled promise rejections and
// console.error calls in #js-status (data-errors, and a visible banner), so that a headless browser's
// DOM dump shows them; the main script zooms and pans the timeline (wheel, drag, buttons, double-click
// to reset), redraws its time axis, shows the hovered block's details, and marks #js-status
// data-ready="1" once it has run to the end.
//
// LIMITATIONS: no chart library; tooltips are the SVG <title> of each element plus the timeline's info line.

#include <string>

namespace exasim::html::internal {

[[nodiscard]] const std::string& page_css();
[[nodiscard]] const std::string& error_trap_script();
[[nodiscard]] const std::string& page_script();

}  // namespace exasim::html::internal
