// render_svg(): the SVG picture of a Layout.
//
// Columns, left to right: addresses at every cut of the axis; the CMA grid; RAM (the /memory
// banks; hatched where a block lies outside RAM; broken-axis marks for gaps); one lane per set of
// overlapping reservations (colour = what the kernel does with it; a dashed orange outline is the
// extent `fix` would give it; a thick dashed black edge is one off the CMA grid); then a label per
// block. Blocks the kernel places at boot are listed under the map, and a legend closes the
// picture.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/map/map.hpp"

namespace cmalign::map {
namespace {

std::string esc(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

// Cuts to about `max` bytes on a UTF-8 character boundary, with "…" when cut.
std::string cut(std::string s, std::size_t max) {
    if (s.size() <= max) return s;
    std::size_t n = max - 1;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
        --n;
    return s.substr(0, n) + "…";
}

// Word-wraps to at most `lines` lines of `max` characters; the last one ends in "…" when cut.
std::vector<std::string> wrap(const std::string& text, std::size_t max, std::size_t lines) {
    std::vector<std::string> out;
    std::string line;
    std::size_t start = 0;
    bool more = false;
    while (start < text.size()) {
        std::size_t space = text.find(' ', start);
        std::string word =
            text.substr(start, space == std::string::npos ? std::string::npos : space - start);
        if (!line.empty() && line.size() + 1 + word.size() > max) {
            out.push_back(line);
            line.clear();
            if (out.size() == lines) {
                more = true;
                break;
            }
        }
        line += (line.empty() ? "" : " ") + word;
        if (space == std::string::npos) break;
        start = space + 1;
    }
    if (!more && !line.empty()) out.push_back(line);
    for (auto& l : out)
        l = cut(l, max);
    if (more) out.back() = cut(out.back(), max - 2) + " …";
    return out;
}

struct Style {
    const char* fill;
    const char* stroke;
    bool dashed;
};

// Colours of the legend; rejected is the one the tests look for.
constexpr const char* red = "#d62728";
constexpr const char* green = "#2ca02c";
constexpr const char* amber = "#f0a020";
constexpr const char* blue = "#1f77b4";
constexpr const char* purple = "#9467bd";
constexpr const char* grey = "#6b6b6b";
constexpr const char* brown = "#8c564b";
constexpr const char* orange = "#ff7f0e";
constexpr const char* ram = "#dce6f2";
constexpr const char* off_grid = "#111111";
constexpr const char* off_grid_dash = R"(stroke-dasharray="5,2")";

Style style_of(const Block& b) {
    if (b.kind == "memreserve") return {brown, "#5a3a32", false};
    switch (b.status) {
    case Status::rejected:
        return {red, "#8b1a1a", false};
    case Status::warning:
        return {amber, "#8a5a00", false};
    case Status::inactive:
        return {"#ffffff", "#888888", true};
    case Status::ok:
        break;
    }
    if (b.kind == "cma") return {green, "#1b5e1b", false};
    if (b.kind == "coherent") return {blue, "#114a73", false};
    if (b.kind == "restricted") return {purple, "#5b3d7a", false};
    return {grey, "#3a3a3a", false};
}

std::string status_text(const Block& b) {
    if (b.kind == "memreserve") return "/memreserve/ (kept from the kernel)";
    std::string s = b.kind + (b.no_map ? ", no-map" : "");
    switch (b.status) {
    case Status::rejected:
        return s + " — REJECTED by the kernel";
    case Status::warning:
        return s + " — warning";
    case Status::inactive:
        return s + " — inactive";
    case Status::ok:
        return s + (b.kind == "cma" ? " — CMA area" : "");
    }
    return s;
}

class Svg {
public:
    void rect(double x, double y, double w, double h, std::string_view fill,
              std::string_view stroke = "none", double sw = 1, std::string_view extra = "") {
        body_ += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" )"
                             R"(fill="{}" stroke="{}" stroke-width="{}" {}/>)"
                             "\n",
                             x, y, w, h, fill, stroke, sw, extra);
    }
    void line(double x1, double y1, double x2, double y2, std::string_view stroke, double sw,
              std::string_view extra = "") {
        body_ += fmt::format(
            R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="{}" {}/>)"
            "\n",
            x1, y1, x2, y2, stroke, sw, extra);
    }
    void text(double x, double y, std::string_view s, std::string_view attrs = "") {
        body_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" {}>{}</text>)"
                             "\n",
                             x, y, attrs, esc(s));
    }
    void raw(std::string_view s) { body_ += s; }
    std::string finish(double width, double height) const {
        return fmt::format(
            R"(<?xml version="1.0" encoding="UTF-8"?>)"
            "\n"
            R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" )"
            R"(viewBox="0 0 {0:.0f} {1:.0f}" font-family="DejaVu Sans, Verdana, sans-serif" )"
            R"(font-size="12">)"
            "\n"
            R"(<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" )"
            R"svg(patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4f4f4"/>)svg"
            R"(<line x1="0" y1="0" x2="0" y2="6" stroke="#b0b0b0" stroke-width="2"/></pattern>)"
            R"(</defs>)"
            "\n"
            R"(<rect width="100%" height="100%" fill="#ffffff"/>)"
            "\n{2}</svg>\n",
            width, height, body_);
    }

private:
    std::string body_;
};

// The picture's geometry and its parts, drawn top to bottom.
class MapPicture {
public:
    explicit MapPicture(const Layout& layout)
        : layout_(layout), label_x_(lane_x + layout.lanes * (lane_w + lane_gap) + 28),
          // Characters of 11–12 px text that fit right of the labels' x (about 6.8 px each).
          label_chars_(static_cast<std::size_t>(std::max(30.0, (width - label_x_ - 12) / 6.8))),
          lanes_right_(lane_x + layout.lanes * (lane_w + lane_gap) - lane_gap) {
        // Scale: about 22 px per axis unit, squeezed so the map stays under 1400 px.
        const double units = layout.height();
        if (units * scale_ > 1400) scale_ = 1400 / units;
        map_bottom_ = top + units * scale_;
    }

    std::string render() {
        header();
        ram_column();
        cma_grid();
        address_labels();
        double y = side_labels(blocks()) + 34;
        y = boot_placed(y);
        y = legend(y);
        return svg_.finish(width, y + 12);
    }

private:
    static constexpr double width = 1000;
    static constexpr double top = 96;
    static constexpr double addr_right = 132;
    static constexpr double grid_x = 140;
    static constexpr double ram_x = 156, ram_w = 100;
    static constexpr double lane_x = 272, lane_w = 130, lane_gap = 8;

    // A block's text beside the lanes, pointing at the block.
    struct Label {
        double want_y;
        std::vector<std::string> lines;
        std::size_t first_fix_line = 0; // lines from here on are about `fix` (0: none)
        const char* colour;
        double anchor_x, anchor_y;
    };

    const Layout& layout_;
    Svg svg_;
    const double label_x_;
    const std::size_t label_chars_;
    const double lanes_right_;
    double scale_ = 22;
    double map_bottom_ = 0;

    double Y(std::uint64_t a) const { return top + layout_.y(a) * scale_; }

    void header() {
        svg_.text(16, 28, "cmalign map: " + layout_.input, R"(font-size="18" font-weight="bold")");
        std::string align =
            layout_.alignment
                ? fmt::format("CMA alignment {}{}", format_size(*layout_.alignment),
                              layout_.alignment_at_boot ? " (largest value; set at boot)" : "")
                : std::string("no CMA alignment");
        svg_.text(16, 50,
                  fmt::format("Linux {} {}, {} pages: {}", layout_.kernel_version, layout_.arch,
                              format_size(layout_.page_size), align),
                  R"(font-size="13")");
        if (!layout_.alignment_rule.empty())
            svg_.text(16, 68, cut(layout_.alignment_rule, 150), R"(font-size="11" fill="#555555")");
        svg_.text(16, 84,
                  fmt::format("{} error{}, {} warning{}; address axis: log-scaled pieces, gaps "
                              "broken",
                              layout_.errors, layout_.errors == 1 ? "" : "s", layout_.warnings,
                              layout_.warnings == 1 ? "" : "s"),
                  R"(font-size="11" fill="#555555")");
    }

    // RAM column and gaps.
    void ram_column() {
        double acc = top;
        for (const auto& s : layout_.axis) {
            const double h = s.height * scale_;
            if (s.in_memory) {
                svg_.rect(ram_x, acc, ram_w, h, ram, "#7a8ca3", 1);
            } else if (s.gap) {
                broken_axis(s, acc, h);
            } else {
                svg_.rect(ram_x, acc, ram_w, h, "url(#hatch)", "#999999", 1);
            }
            acc += h;
        }
        for (const auto& b : layout_.banks) {
            const double y0 = Y(b.base);
            svg_.text(ram_x + ram_w / 2, y0 + 13, cut(b.label, 18),
                      R"(font-size="9" text-anchor="middle" fill="#33475b")");
            svg_.text(ram_x + ram_w / 2, y0 + 24, format_size(b.size),
                      R"(font-size="9" text-anchor="middle" fill="#33475b")");
        }
    }

    // Broken axis: two zigzags and the size of the hole.
    void broken_axis(const Segment& s, double acc, double h) {
        for (double off : {h * 0.22, h * 0.78}) {
            std::string path = fmt::format(R"(<polyline fill="none" stroke="#999999" )"
                                           R"(stroke-width="1.2" points=")");
            for (double x = grid_x - 6; x <= lanes_right_ + 4; x += 8)
                path += fmt::format("{:.1f},{:.1f} ", x,
                                    acc + off + ((static_cast<int>(x) / 8) % 2 ? -3.0 : 3.0));
            svg_.raw(path + "\"/>\n");
        }
        svg_.text(ram_x + ram_w + 6, acc + h / 2 + 3.5,
                  fmt::format("≈ {} not in /memory", format_size(s.end - s.begin)),
                  R"(font-size="10" fill="#777777")");
    }

    // CMA grid: every multiple of the alignment where lines stay 4 px apart, and always the
    // multiples around each CMA pool's edges.
    void cma_grid() {
        if (!layout_.alignment || !*layout_.alignment) return;
        const std::uint64_t a = *layout_.alignment;
        for (const auto& s : layout_.axis) {
            const double h = s.height * scale_;
            if (s.gap) continue;
            const double per = h * static_cast<double>(a) / static_cast<double>(s.end - s.begin);
            if (!(per >= 8)) continue; // also NaN: an empty segment
            std::uint64_t first = (s.begin + a - 1) / a * a;
            if (first >= s.begin)
                for (std::uint64_t m = first; m < s.end && m >= first; m += a)
                    svg_.line(grid_x, Y(m), lanes_right_, Y(m), "#4a6fa5", 0.6,
                              R"(stroke-dasharray="3,3" opacity="0.55")");
        }
        for (const auto& b : layout_.placed) {
            if (b.kind != "cma") continue;
            for (std::uint64_t edge : {*b.base, *b.base + b.size}) {
                for (std::uint64_t m : {edge / a * a, (edge / a + 1) * a}) {
                    if (m < edge / a * a) continue; // overflow
                    svg_.line(grid_x, Y(m), lanes_right_, Y(m), "#4a6fa5", 0.6,
                              R"(stroke-dasharray="3,3" opacity="0.55")");
                    svg_.line(grid_x, Y(m), grid_x + 12, Y(m), "#4a6fa5", 1.5);
                }
            }
        }
    }

    // Address labels at the cuts, at least 12 px apart.
    void address_labels() {
        double last_label = -100;
        int digits = 8;
        if (!layout_.axis.empty())
            while (digits < 16 && (layout_.axis.back().end >> (4 * digits)) != 0)
                ++digits;
        auto address_label = [&](std::uint64_t a, double y) {
            if (y - last_label < 12) return;
            svg_.text(
                addr_right, y + 4, fmt::format("0x{:0{}x}", a, digits),
                R"(font-family="DejaVu Sans Mono, monospace" font-size="10.5" text-anchor="end")");
            svg_.line(addr_right + 3, y, ram_x, y, "#888888", 0.6);
            last_label = y;
        };
        for (const auto& s : layout_.axis)
            address_label(s.begin, Y(s.begin));
        if (!layout_.axis.empty()) {
            last_label = -100; // the end address always shows
            address_label(layout_.axis.back().end, map_bottom_);
        }
    }

    // Blocks and fix outlines; their labels, to be placed beside the lanes.
    std::vector<Label> blocks() {
        std::vector<Label> labels;
        for (const auto& b : layout_.placed) {
            const double x = lane_x + b.lane * (lane_w + lane_gap);
            const double y0 = Y(*b.base);
            double y1 = Y(*b.base + b.size);
            if (y1 - y0 < 3) y1 = y0 + 3;
            const auto st = style_of(b);
            if (b.fixed_size) {
                const double f1 = Y(*b.base + *b.fixed_size);
                svg_.rect(x - 3, y0 - 1, lane_w + 6, f1 - y0 + 2, "none", orange, 2,
                          R"(stroke-dasharray="6,3")");
            }
            svg_.rect(x, y0, lane_w, y1 - y0, st.fill, st.stroke, 1,
                      st.dashed ? R"(stroke-dasharray="4,2")" : "");
            // Edges off the CMA grid: black and dashed, visible on the red of a rejected pool.
            if (b.base_aligned && !*b.base_aligned)
                svg_.line(x - 6, y0, x + lane_w + 6, y0, off_grid, 3, off_grid_dash);
            if (b.size_aligned && !*b.size_aligned)
                svg_.line(x - 6, y1, x + lane_w + 6, y1, off_grid, 3, off_grid_dash);
            if (y1 - y0 >= 15)
                svg_.text(x + lane_w / 2, y0 + (y1 - y0) / 2 + 4, cut(b.label, 20),
                          fmt::format(R"(font-size="10" text-anchor="middle" fill="{}")",
                                      b.status == Status::inactive ? "#333333" : "#ffffff"));
            labels.push_back(label_of(b, st, x, y0 + (y1 - y0) / 2));
        }
        return labels;
    }

    Label label_of(const Block& b, const Style& st, double x, double middle) const {
        Label l;
        l.want_y = middle;
        l.colour = st.stroke;
        l.anchor_x = x + lane_w + (b.fixed_size ? 3 : 0);
        l.anchor_y = l.want_y;
        l.lines.push_back(b.label);
        l.lines.push_back(
            fmt::format("{} at 0x{:x} · {}", format_size(b.size), *b.base, status_text(b)));
        for (auto& w : wrap(b.reason, label_chars_, 2))
            l.lines.push_back(std::move(w));
        if (b.fixed_size || !b.fix_blocked.empty()) l.first_fix_line = l.lines.size();
        if (b.fixed_size)
            l.lines.push_back(
                fmt::format("fix: size {} → {}", format_size(b.size), format_size(*b.fixed_size)));
        else if (!b.fix_blocked.empty())
            for (auto& w : wrap("fix cannot: " + b.fix_blocked, label_chars_, 2))
                l.lines.push_back(std::move(w));
        return l;
    }

    // The labels top to bottom, none over another; the y below the lowest label or the map.
    double side_labels(const std::vector<Label>& labels) {
        double next_free = top;
        double labels_bottom = map_bottom_;
        for (const auto& l : labels) {
            const double h = static_cast<double>(l.lines.size()) * 14 + 6;
            double y = std::max(l.want_y - h / 2 + 10, next_free);
            svg_.line(l.anchor_x, l.anchor_y, label_x_ - 6, y - 4, "#999999", 0.8);
            for (std::size_t i = 0; i < l.lines.size(); ++i) {
                std::string attrs = i == 0
                                        ? fmt::format(R"(font-weight="bold" fill="{}")", l.colour)
                                    : l.first_fix_line != 0 && i >= l.first_fix_line
                                        ? fmt::format(R"(fill="{}")", "#c05000")
                                        : std::string(R"(fill="#333333" font-size="11")");
                svg_.text(label_x_, y + static_cast<double>(i) * 14, l.lines[i], attrs);
            }
            next_free = y + h;
            labels_bottom = std::max(labels_bottom, next_free);
        }
        return labels_bottom;
    }

    // Blocks placed at boot, from `y` down; the y below them.
    double boot_placed(double y) {
        if (layout_.dynamic.empty()) return y;
        svg_.text(16, y, "Placed by the kernel at boot (size only, no reg): width ∝ log size",
                  R"(font-weight="bold")");
        y += 14;
        for (const auto& b : layout_.dynamic)
            y = boot_placed_block(b, y);
        return y;
    }

    double boot_placed_block(const Block& b, double y) {
        const auto st = style_of(b);
        const double mib = static_cast<double>(b.size) / (1024.0 * 1024.0);
        const double w = 40 + 30 * std::log2(1 + mib);
        const double fw =
            b.fixed_size
                ? 40 + 30 * std::log2(1 + static_cast<double>(*b.fixed_size) / (1024.0 * 1024.0))
                : 0;
        if (b.fixed_size)
            svg_.rect(ram_x - 3, y - 3, fw + 6, 24, "none", orange, 2, R"(stroke-dasharray="6,3")");
        svg_.rect(ram_x, y, w, 18, st.fill, st.stroke, 1,
                  st.dashed ? R"(stroke-dasharray="4,2")" : "");
        const double tx = ram_x + std::max(w, fw) + 16;
        const auto dyn_chars = static_cast<std::size_t>(std::max(30.0, (width - tx - 12) / 6.8));
        svg_.text(tx, y + 13,
                  fmt::format("{} — {} · {}", b.label, format_size(b.size), status_text(b)),
                  fmt::format(R"(font-weight="bold" fill="{}")", st.stroke));
        double line_y = y + 27;
        for (const auto& text_line : wrap(b.reason, dyn_chars, 2)) {
            svg_.text(tx, line_y, text_line, R"(fill="#333333" font-size="11")");
            line_y += 14;
        }
        if (b.fixed_size) {
            svg_.text(
                tx, line_y,
                fmt::format("fix: size {} → {}", format_size(b.size), format_size(*b.fixed_size)),
                R"(fill="#c05000")");
            line_y += 14;
        } else if (!b.fix_blocked.empty()) {
            for (const auto& text_line : wrap("fix cannot: " + b.fix_blocked, dyn_chars, 2)) {
                svg_.text(tx, line_y, text_line, R"(fill="#c05000")");
                line_y += 14;
            }
        }
        return std::max(y + 30, line_y + 6);
    }

    // Legend and notes, from `y` down; the y below them.
    double legend(double y) {
        y += 20;
        svg_.text(16, y, "Legend", R"(font-weight="bold")");
        y += 10;
        struct Entry {
            const char* fill;
            const char* stroke;
            const char* extra;
            const char* text;
        };
        const Entry entries[] = {
            {ram, "#7a8ca3", "", "RAM (/memory)"},
            {"url(#hatch)", "#999999", "", "not RAM"},
            {green, "#1b5e1b", "", "CMA pool the kernel accepts"},
            {red, "#8b1a1a", "", "rejected by the kernel"},
            {amber, "#8a5a00", "", "kernel warns"},
            {blue, "#114a73", "", "coherent DMA pool"},
            {purple, "#5b3d7a", "", "restricted DMA pool"},
            {grey, "#3a3a3a", "", "other reservation"},
            {brown, "#5a3a32", "", "/memreserve/ entry"},
            {"#ffffff", "#888888", R"(stroke-dasharray="4,2")", "inactive"},
            {"none", orange, R"(stroke-dasharray="6,3")", "size `fix` would write"},
        };
        double lx = 16;
        for (const auto& e : entries) {
            const double w = 24 + 7.0 * static_cast<double>(std::string_view(e.text).size());
            if (lx + w > width - 10) {
                lx = 16;
                y += 22;
            }
            svg_.rect(lx, y, 18, 14, e.fill, e.stroke, e.fill == std::string_view("none") ? 2 : 1,
                      e.extra);
            svg_.text(lx + 24, y + 11, e.text, R"(font-size="11")");
            lx += w;
        }
        y += 24;
        svg_.line(16, y + 5, 40, y + 5, off_grid, 3, off_grid_dash);
        svg_.text(46, y + 9, "edge off the CMA grid", R"(font-size="11")");
        svg_.line(200, y + 5, 224, y + 5, "#4a6fa5", 0.8, R"(stroke-dasharray="3,3")");
        svg_.text(230, y + 9,
                  layout_.alignment
                      ? fmt::format("CMA grid: multiples of {} (all where ≥ 8 px apart, else "
                                    "around CMA pools)",
                                    format_size(*layout_.alignment))
                      : std::string("no CMA grid (no alignment)"),
                  R"(font-size="11")");
        y += 20;
        for (const auto& n : layout_.notes) {
            svg_.text(16, y, "note: " + n, R"(font-size="11" fill="#555555")");
            y += 15;
        }
        return y;
    }
};

} // namespace

std::string render_svg(const Layout& layout) {
    return MapPicture(layout).render();
}

} // namespace cmalign::map
