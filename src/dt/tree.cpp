// Member functions of the resolved tree (dt/tree.hpp).
#include "cmalign/dt/tree.hpp"

#include <algorithm>

#include "cmalign/internal/core/bytes.hpp"

namespace cmalign::dt {

std::optional<std::vector<std::uint32_t>> Property::cells() const {
    if (value.size() % 4 != 0) return std::nullopt;
    std::vector<std::uint32_t> out;
    out.reserve(value.size() / 4);
    for (std::size_t i = 0; i < value.size(); i += 4)
        out.push_back(bytes::be32_at(value, i));
    return out;
}

std::optional<std::uint32_t> Property::u32() const {
    if (value.size() != 4) return std::nullopt;
    return bytes::be32(value.data());
}

const ValueChunk* Property::chunk_at(std::size_t offset) const {
    // Chunks are in value order; a binary search keeps long arrays cheap.
    auto it = std::upper_bound(chunks.begin(), chunks.end(), offset,
                               [](std::size_t off, const ValueChunk& c) { return off < c.offset; });
    if (it == chunks.begin()) return nullptr;
    --it;
    if (offset >= it->offset && offset < it->offset + it->size) return &*it;
    return nullptr;
}

const Property* Node::find_property(std::string_view prop_name) const {
    for (const auto& p : properties)
        if (p.name == prop_name) return &p;
    return nullptr;
}

Property* Node::find_property(std::string_view prop_name) {
    for (auto& p : properties)
        if (p.name == prop_name) return &p;
    return nullptr;
}

const Node* Node::find_child(std::string_view child_name) const {
    for (const auto& c : children)
        if (c.name == child_name) return &c;
    return nullptr;
}

std::string_view Node::base_name() const {
    std::string_view n = name;
    auto at = n.find('@');
    return at == std::string_view::npos ? n : n.substr(0, at);
}

const Node* Tree::find(std::string_view path) const {
    if (path.empty() || path.front() != '/') return nullptr;
    const Node* node = &root;
    std::size_t pos = 1;
    while (pos < path.size()) {
        auto slash = path.find('/', pos);
        auto part = path.substr(pos, slash == std::string_view::npos ? std::string_view::npos
                                                                     : slash - pos);
        if (!part.empty()) {
            node = node->find_child(part);
            if (!node) return nullptr;
        }
        if (slash == std::string_view::npos) break;
        pos = slash + 1;
    }
    return node;
}

namespace {
void walk_impl(const Node& node, std::string& path,
               const std::function<void(const std::string&, const Node&)>& visit) {
    visit(path, node);
    for (const auto& child : node.children) {
        auto keep = path.size();
        if (path.empty() || path.back() != '/') path += '/';
        path += child.name;
        walk_impl(child, path, visit);
        path.resize(keep);
    }
}
} // namespace

void walk(const Node& root, const std::string& root_path,
          const std::function<void(const std::string&, const Node&)>& visit) {
    std::string path = root_path.empty() ? std::string("/") : root_path;
    walk_impl(root, path, visit);
}

} // namespace cmalign::dt
