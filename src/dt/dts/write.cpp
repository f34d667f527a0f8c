// Tree output: the JSON of `cmalign tree` (docs/json.md), and DTS text shaped like `dtc -O dts`
// (value types guessed as dtc's treesource.c guess_value_type does for a DTB input).
#include "cmalign/internal/dt/write.hpp"

#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "cmalign/internal/core/bytes.hpp"
#include "cmalign/internal/dt/tree_json.hpp"

namespace cmalign::dt {

std::string to_hex(const std::vector<std::uint8_t>& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    s.resize(bytes.size() * 2);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        s[2 * i] = digits[bytes[i] >> 4];
        s[2 * i + 1] = digits[bytes[i] & 15];
    }
    return s;
}

namespace {

std::string join(const std::string& parent, const std::string& name) {
    if (parent.empty()) return "/";
    return parent == "/" ? "/" + name : parent + "/" + name;
}

bool is_string_char(std::uint8_t c) {
    return std::isprint(c) || c == 0 || (c != 0 && std::strchr("\a\b\t\n\v\f\r", c));
}

void json_nodes(const Node& node, const std::string& path, nlohmann::json& out) {
    nlohmann::json n;
    n["path"] = path;
    n["file"] = node.where.file;
    n["line"] = node.where.line;
    nlohmann::json props = nlohmann::json::array();
    for (const auto& p : node.properties)
        props.push_back({{"name", p.name}, {"value", to_hex(p.value)}, {"refs", p.has_refs}});
    n["properties"] = std::move(props);
    out.push_back(std::move(n));
    for (const auto& c : node.children)
        json_nodes(c, join(path, c.name), out);
}

void write_string(std::string& out, const std::uint8_t* s, std::size_t len) {
    out += '"';
    for (std::size_t i = 0; i < len; ++i) {
        const auto c = s[i];
        switch (c) {
        case '\a':
            out += "\\a";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\v':
            out += "\\v";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '"':
            out += "\\\"";
            break;
        default:
            if (std::isprint(c))
                out += static_cast<char>(c);
            else
                out += fmt::format("\\x{:02x}", c);
        }
    }
    out += '"';
}

void write_value(std::string& out, const Property& p) {
    const auto& v = p.value;
    switch (guess_shape(v)) {
    case ValueShape::empty:
        return;
    case ValueShape::strings: {
        out += " = ";
        std::size_t start = 0;
        bool first = true;
        for (std::size_t i = 0; i < v.size(); ++i)
            if (v[i] == 0) {
                if (!first) out += ", ";
                write_string(out, v.data() + start, i - start);
                first = false;
                start = i + 1;
            }
        return;
    }
    case ValueShape::cells: {
        out += " = <";
        for (std::size_t i = 0; i < v.size(); i += 4) {
            if (i) out += ' ';
            const std::uint32_t c = bytes::be32_at(v, i);
            out += fmt::format("0x{:02x}", c);
        }
        out += '>';
        return;
    }
    case ValueShape::bytes: {
        out += " = [";
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ' ';
            out += fmt::format("{:02x}", v[i]);
        }
        out += ']';
        return;
    }
    }
}

void dts_node(std::string& out, const Node& node, const std::string& name, int depth) {
    const std::string indent(static_cast<std::size_t>(depth), '\t');
    out += indent;
    for (const auto& l : node.labels)
        out += l + ": ";
    out += name;
    out += " {\n";
    for (const auto& p : node.properties) {
        out += indent + '\t';
        for (const auto& l : p.labels)
            out += l + ": ";
        out += p.name;
        write_value(out, p);
        out += ";\n";
    }
    for (const auto& c : node.children) {
        out += '\n';
        dts_node(out, c, c.name, depth + 1);
    }
    out += indent + "};\n";
}

} // namespace

ValueShape guess_shape(const std::vector<std::uint8_t>& v) {
    if (v.empty()) return ValueShape::empty;
    std::size_t not_string = 0;
    std::size_t nul = 0;
    for (auto c : v) {
        if (!is_string_char(c)) ++not_string;
        if (c == 0) ++nul;
    }
    // dtc also refuses empty strings in the middle ("\0\0") as text: more NULs than other bytes.
    if (v.back() == 0 && not_string == 0 && nul <= v.size() - nul) return ValueShape::strings;
    if (v.size() % 4 == 0) return ValueShape::cells;
    return ValueShape::bytes;
}

std::optional<nlohmann::json> tree_json(const Tree& tree, const std::string& path) {
    const Node* start = tree.find(path.empty() ? "/" : path);
    if (!start) return std::nullopt;
    nlohmann::json nodes = nlohmann::json::array();
    std::string clean = path.empty() ? "/" : path;
    while (clean.size() > 1 && clean.back() == '/')
        clean.pop_back();
    json_nodes(*start, clean, nodes);
    nlohmann::json out;
    out["nodes"] = std::move(nodes);
    return out;
}

std::optional<std::string> tree_dts(const Tree& tree, const std::string& path) {
    const Node* start = tree.find(path.empty() ? "/" : path);
    if (!start) return std::nullopt;
    std::string out = "/dts-v1/;\n\n";
    for (const auto& m : tree.memreserve)
        out += fmt::format("/memreserve/\t0x{:016x} 0x{:016x};\n", m.address, m.size);
    if (start == &tree.root) {
        dts_node(out, tree.root, "/", 0);
    } else {
        // A subtree is written at its place: / { a { b { ... }; }; };
        std::vector<std::string> parts;
        std::string rest = path;
        std::size_t pos = 0;
        while ((pos = rest.find('/')) != std::string::npos) {
            if (pos) parts.push_back(rest.substr(0, pos));
            rest = rest.substr(pos + 1);
        }
        if (!rest.empty()) parts.push_back(rest);
        out += "/ {\n";
        for (std::size_t i = 0; i + 1 < parts.size(); ++i)
            out += std::string(i + 1, '\t') + parts[i] + " {\n";
        dts_node(out, *start, start->name, static_cast<int>(parts.size()));
        for (std::size_t i = parts.size() - 1; i-- > 0;)
            out += std::string(i + 1, '\t') + "};\n";
        out += "};\n";
    }
    return out;
}

} // namespace cmalign::dt
