// render_text(): the terminal picture of a Layout, no wider than the given columns.
//
// A strip per /memory bank drawn on the Layout's piecewise axis (so a 1 MiB firmware region in
// 1 GiB of RAM still gets a character), then the blocks in address order with the findings and
// what `fix` would write, then the blocks the kernel places at boot.
#include <algorithm>

#include <fmt/format.h>

#include "cmalign/core/size.hpp"
#include "cmalign/map/map.hpp"

namespace cmalign::map {
namespace {

// Display width of UTF-8 text whose characters are all one column wide.
std::size_t width(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

// Cuts to `max` columns, with "…" when cut.
std::string fit(std::string s, std::size_t max) {
    if (width(s) <= max) return s;
    std::string out;
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
        if (n + 1 >= max) break;
        out.append(s, i, len);
        i += len;
        ++n;
    }
    return out + "…";
}

// Word-wraps `text` into lines of at most `max` columns.
std::vector<std::string> wrap(const std::string& text, std::size_t max) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t space = text.find(' ', start);
        std::string word =
            text.substr(start, space == std::string::npos ? std::string::npos : space - start);
        if (!line.empty() && width(line) + 1 + width(word) > max) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        if (space == std::string::npos) break;
        start = space + 1;
    }
    if (!line.empty()) lines.push_back(line);
    for (auto& l : lines)
        l = fit(l, max);
    return lines;
}

const char* mark(const Block& b) {
    if (b.kind == "memreserve") return "▒";
    switch (b.status) {
    case Status::rejected:
        return "✗";
    case Status::warning:
        return "!";
    case Status::inactive:
        return "·";
    case Status::ok:
        return b.kind == "cma" ? "✓" : "■";
    }
    return "■";
}

// One character of a strip: the most telling block over [lo, hi).
char strip_char(const Layout& layout, std::uint64_t lo, std::uint64_t hi) {
    int best = 0;
    char c = '-';
    for (const auto& b : layout.placed) {
        const std::uint64_t base = *b.base;
        const std::uint64_t end =
            b.size > ~std::uint64_t{0} - base ? ~std::uint64_t{0} : base + b.size;
        const std::uint64_t grown =
            b.fixed_size && *b.fixed_size > b.size
                ? (*b.fixed_size > ~std::uint64_t{0} - base ? ~std::uint64_t{0}
                                                            : base + *b.fixed_size)
                : end;
        int rank = 0;
        char here = '-';
        if (base < hi && lo < end) {
            if (b.status == Status::rejected) {
                rank = 6;
                here = 'X';
            } else if (b.status == Status::warning) {
                rank = 5;
                here = '!';
            } else if (b.kind == "memreserve") {
                rank = 3;
                here = 'm';
            } else if (b.status == Status::inactive) {
                rank = 2;
                here = '.';
            } else {
                rank = 4;
                here = b.kind == "cma" ? 'C' : '#';
            }
        } else if (base < hi && lo < grown) {
            rank = 1;
            here = '+';
        }
        if (rank > best) {
            best = rank;
            c = here;
        }
    }
    return c;
}

// Back from axis units to addresses: the segment that holds `y`.
std::uint64_t address_at(const Layout& layout, double y) {
    double acc = 0;
    for (const auto& seg : layout.axis) {
        if (y <= acc + seg.height) {
            const double f = seg.height > 0 ? (y - acc) / seg.height : 0;
            return seg.begin +
                   static_cast<std::uint64_t>(f * static_cast<double>(seg.end - seg.begin));
        }
        acc += seg.height;
    }
    return layout.axis.empty() ? std::uint64_t{0} : layout.axis.back().end;
}

// The text picture, drawn top to bottom into `out_`.
class TextMap {
public:
    TextMap(const Layout& layout, int columns)
        : layout_(layout), cols_(static_cast<std::size_t>(std::max(columns, 60))),
          digits_(address_digits(layout)), pad_(static_cast<std::size_t>(digits_) + 3, ' ') {}

    std::string render() {
        header();
        strips();
        out_ += "\n";
        placed_blocks();
        if (!layout_.dynamic.empty()) {
            out_ += "\n";
            line("placed by the kernel at boot (no reg):");
            for (const auto& b : layout_.dynamic)
                block_lines(b, std::string(static_cast<std::size_t>(digits_) + 2, ' ') + " ");
        }
        for (const auto& n : layout_.notes)
            for (const auto& w : wrap("note: " + n, cols_))
                line(w);
        line("marks: ✓ CMA ok  ■ reserved  ✗ rejected  ! warning  · inactive  ▒ memreserve");
        return std::move(out_);
    }

private:
    static constexpr std::size_t name_w = 26;
    const Layout& layout_;
    const std::size_t cols_;
    const int digits_;
    const std::string pad_;
    std::string out_;
    int open_banks_ = 0;

    // Address width: hex digits of the highest address drawn.
    static int address_digits(const Layout& layout) {
        std::uint64_t highest = 0;
        for (const auto& s : layout.axis)
            highest = std::max(highest, s.end);
        int digits = 8;
        while (digits < 16 && (highest >> (4 * digits)) != 0)
            ++digits;
        return digits;
    }

    void line(const std::string& s) { out_ += fit(s, cols_) + "\n"; }
    std::string addr(std::uint64_t a) const { return fmt::format("0x{:0{}x}", a, digits_); }
    const char* rail() const { return open_banks_ > 0 ? "│" : " "; }

    void header() {
        line(fmt::format("cmalign map: {}", layout_.input));
        std::string align =
            layout_.alignment
                ? fmt::format("CMA alignment {}{}", format_size(*layout_.alignment),
                              layout_.alignment_at_boot ? " (largest; set at boot)" : "")
                : std::string("no CMA alignment");
        line(fmt::format("{} {}, {} pages, {}; {} error{}, {} warning{}", layout_.arch,
                         layout_.kernel_version, format_size(layout_.page_size), align,
                         layout_.errors, layout_.errors == 1 ? "" : "s", layout_.warnings,
                         layout_.warnings == 1 ? "" : "s"));
    }

    // Strips, one per bank.
    void strips() {
        const std::size_t strip = cols_ - 4;
        for (const auto& bank : layout_.banks) {
            out_ += "\n";
            line(fmt::format("{}: {} at {}", bank.label, format_size(bank.size), addr(bank.base)));
            const double y0 = layout_.y(bank.base);
            const double y1 = layout_.y(bank.base + bank.size);
            std::string s = " |";
            for (std::size_t i = 0; i < strip - 2; ++i) {
                const double a =
                    y0 + (y1 - y0) * static_cast<double>(i) / static_cast<double>(strip - 2);
                const double b =
                    y0 + (y1 - y0) * static_cast<double>(i + 1) / static_cast<double>(strip - 2);
                std::uint64_t lo = address_at(layout_, a), hi = address_at(layout_, b);
                if (hi <= lo) hi = lo + 1;
                s += strip_char(layout_, lo, hi);
            }
            line(s + "|");
        }
        if (!layout_.banks.empty())
            line(" - RAM  C CMA ok  X rejected  ! warning  # reserved  m memreserve  + fix grows");
    }

    void block_lines(const Block& b, const std::string& head) {
        std::string kind = b.kind + (b.no_map ? " no-map" : "");
        line(fmt::format("{} {} {:<{}} {:>9} {}", head, mark(b), fit(b.label, name_w), name_w,
                         format_size(b.size), kind));
        const std::size_t indent = width(pad_) + 4;
        std::vector<std::string> notes;
        if (!b.reason.empty()) notes.push_back(b.reason);
        if (b.fixed_size)
            notes.push_back(
                fmt::format("fix: size {} → {}", format_size(b.size), format_size(*b.fixed_size)));
        else if (!b.fix_blocked.empty())
            notes.push_back("fix cannot: " + b.fix_blocked);
        // Two lines per note keep the picture compact; `cmalign check` prints them whole.
        for (const auto& n : notes) {
            auto lines = wrap(n, cols_ - indent);
            if (lines.size() > 2) {
                lines.resize(2);
                lines[1] = fit(lines[1] + " …", cols_ - indent);
            }
            for (const auto& w : lines)
                line(fmt::format("{}{}   {}", pad_, rail(), w));
        }
    }

    // Blocks in address order, between their banks' starts and ends.
    void placed_blocks() {
        struct Event {
            std::uint64_t at;
            int order; // bank start 0, block 1, bank end 2
            const Bank* bank;
            const Block* block;
        };
        std::vector<Event> events;
        for (const auto& b : layout_.banks) {
            events.push_back({b.base, 0, &b, nullptr});
            events.push_back({b.base + b.size, 2, &b, nullptr});
        }
        for (const auto& b : layout_.placed)
            events.push_back({*b.base, 1, nullptr, &b});
        std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
            return a.at != b.at ? a.at < b.at : a.order < b.order;
        });
        std::uint64_t last = 0;
        bool first = true;
        for (const auto& e : events) {
            if (!first && e.at > last && open_banks_ == 0 && e.order != 2)
                line(fmt::format("{}≈  {} not in /memory", pad_, format_size(e.at - last)));
            first = false;
            if (e.order == 0) {
                line(fmt::format("{} ┌ {} ({})", addr(e.at), e.bank->label,
                                 format_size(e.bank->size)));
                ++open_banks_;
            } else if (e.order == 2) {
                --open_banks_;
                line(fmt::format("{} └ end of {}", addr(e.at), e.bank->label));
            } else {
                block_lines(*e.block, fmt::format("{} {}", addr(e.at), rail()));
                const auto& b = *e.block;
                last = std::max(last, b.size > ~std::uint64_t{0} - *b.base ? ~std::uint64_t{0}
                                                                           : *b.base + b.size);
                continue;
            }
            last = std::max(last, e.at);
        }
    }
};

} // namespace

std::string render_text(const Layout& layout, int columns) {
    return TextMap(layout, columns).render();
}

std::string to_ascii(std::string_view text) {
    static const std::pair<std::string_view, std::string_view> glyphs[] = {
        {"│", "|"}, {"┌", "+"}, {"└", "+"},  {"✓", "+"}, {"✗", "X"},   {"■", "#"},
        {"▒", "m"}, {"·", "."}, {"→", "->"}, {"≈", "~"}, {"…", "..."},
    };
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        bool replaced = false;
        for (const auto& [glyph, ascii] : glyphs)
            if (text.substr(i, glyph.size()) == glyph) {
                out += ascii;
                i += glyph.size();
                replaced = true;
                break;
            }
        if (!replaced) {
            unsigned char c = static_cast<unsigned char>(text[i]);
            if (c < 0x80) {
                out += text[i++];
            } else { // any other UTF-8 sequence: one '?'
                out += '?';
                ++i;
                while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80)
                    ++i;
            }
        }
    }
    return out;
}

} // namespace cmalign::map
