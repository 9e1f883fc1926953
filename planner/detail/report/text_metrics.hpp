// Internal to the report's pictures: how wide a label is drawn, so a chart makes room for it or
// shortens it instead of letting the browser clip it.
//
// The pictures name their font (kFontFamily): DejaVu Sans first, the sans-serif of Debian and
// most Linux desktops, then its relatives Bitstream Vera Sans and Verdana, which share its
// metrics; a browser without any of them falls back to its own sans-serif, which is narrower
// (Arial, Helvetica), so a label measured here still fits. The widths are DejaVu Sans's advance
// widths for printable ASCII, read from DejaVuSans.ttf's hmtx table (2048 units an em); any
// other character is taken as a full em, the widest of them (an ellipsis, a multiplication
// sign, a letter with an accent are narrower), so a measure never runs short. Kerning, which
// only narrows pairs, is ignored for the same reason.
#pragma once

#include <string>
#include <string_view>

namespace burst::planner::svg {

inline constexpr const char* kFontFamily = "DejaVu Sans, Bitstream Vera Sans, Verdana, sans-serif";

// The advance width of UTF-8 `text` at `size` pixels.
[[nodiscard]] double text_width(std::string_view text, double size);

// `text` whole when it fits `width`; otherwise its longest prefix (whole characters) followed by
// an ellipsis that does; "" when not even the ellipsis fits.
[[nodiscard]] std::string fit_text(std::string_view text, double size, double width);

}  // namespace burst::planner::svg
