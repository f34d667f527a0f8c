// The DTS resolver's tree under construction (BNode, BProp) and its state (class Resolver),
// shared by dts/resolve.cpp, dts/checks.cpp and dts/generate.cpp. Not part of the public
// interface.
#pragma once

#include <algorithm>
#include <deque>
#include <memory_resource>
#include <unordered_map>
#include <unordered_set>

#include "cmalign/internal/dt/dts.hpp"
namespace cmalign::dt::dts_resolver {

constexpr std::uint32_t no_phandle = 0;

inline bool phandle_valid(std::uint32_t p) {
    return p != 0 && p != 0xffffffffu;
}

struct BLabel {
    std::string_view name;
    bool deleted = false;
    std::uint32_t hash = 0; // syntax::label_hash(name) where the syntax had it; 0: not computed
};

// dtc's add_label: revives a deleted label of the same name, else puts the new one first (the
// order shows in __symbols__ and in DTS output).
template <typename Labels>
void add_label(Labels& labels, std::string_view name, std::uint32_t hash = 0) {
    for (auto& l : labels)
        if (l.name == name) {
            l.deleted = false;
            return;
        }
    labels.insert(labels.begin(), BLabel{name, false, hash});
}

struct BNode;

// Kept small (a board has about 1,400): what most properties lack (labels, reference fixups,
// generated values) is kept apart.
struct BProp {
    std::string_view name;
    const syntax::Property* def = nullptr; // the assignment whose value counts; null: generated
    bool deleted = false;
    bool generated_phandle = false; // `phandle` added by get_node_phandle
    struct Extra {
        std::vector<BLabel> labels;
        // Filled by the reference fixups, in the order the references appear in the value.
        std::vector<std::uint32_t> phandles;
        std::vector<const BNode*> path_targets;
        std::vector<std::uint8_t> generated; // value of a property dtc generates (fixups, symbols)
    };
    std::unique_ptr<Extra> extra;

    Extra& own() {
        if (!extra) extra = std::make_unique<Extra>();
        return *extra;
    }
    const std::vector<BLabel>& labels() const { return extra ? extra->labels : none().labels; }
    const std::vector<std::uint32_t>& phandles() const {
        return extra ? extra->phandles : none().phandles;
    }
    const std::vector<const BNode*>& path_targets() const {
        return extra ? extra->path_targets : none().path_targets;
    }
    const std::vector<std::uint8_t>& generated() const {
        return extra ? extra->generated : none().generated;
    }

private:
    static const Extra& none() {
        static const Extra empty;
        return empty;
    }
};

// Its vectors come from the resolver's arena (Resolver::memory_), freed at once with the
// board: a board builds about a thousand nodes, and allocating and freeing their vectors one by
// one was a tenth of the resolver's time.
struct BNode {
    explicit BNode(std::pmr::memory_resource* memory)
        : labels(memory), props(memory), children(memory) {}
    std::string_view name;
    const syntax::Node* first_def = nullptr;
    BNode* parent = nullptr;
    std::pmr::vector<BLabel> labels;
    std::pmr::vector<BProp> props;
    std::pmr::vector<BNode*> children;
    bool deleted = false;
    bool merged_away = false; // a body merged into an existing node: not part of the tree
    bool omit_if_unused = false;
    bool referenced = false;
    bool in_tree = false; // convert() puts it into the Tree (fill_paths, root_child)
    // Some property's value may hold a reference (set where one is built or merged in): the
    // reference fixups look at no property of the nine nodes in ten that have none.
    bool reference_props = false;
    std::uint32_t phandle = no_phandle;
    std::string_view fullpath; // NUL-terminated, in the resolver's path storage
};

// Evaluated property value.
struct Value {
    std::vector<std::uint8_t> bytes;
    struct Chunk {
        std::size_t offset;
        std::size_t size;
        TextSpan span;
        bool plain_literal;
    };
    std::vector<Chunk> chunks;
    std::vector<std::size_t> phandle_offsets; // byte offset of each 32-bit reference cell
    bool has_refs = false;
};

inline void put_be(std::vector<std::uint8_t>& out, std::uint64_t v, unsigned bits) {
    for (int shift = static_cast<int>(bits) - 8; shift >= 0; shift -= 8)
        out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// `phandles` / `paths`: fixup results (nullptr before the fixups: placeholders, no paths).
void evaluate(const syntax::Property& prop, const std::vector<std::uint32_t>* phandles,
              const std::vector<const BNode*>* paths, bool want_chunks, Value& out);

// A table keyed by label: open addressing, no allocation per entry (a board has a thousand
// labels or more, looked up for every reference), the keys viewing the syntax tree's text.
// `h` is syntax::label_hash(name), or 0 to have it computed.
template <typename Value> class LabelTable {
public:
    // The entry for `name`, made (value-initialised) when absent; `made` says which.
    Value& get(std::string_view name, std::uint32_t h, bool& made) {
        if (!h) h = syntax::label_hash(name);
        if ((used_ + 1) * 4 > slots_.size() * 3) grow();
        Slot& s = probe(slots_, name, h);
        made = !s.key.data();
        if (made) {
            s = {name, h, Value{}};
            ++used_;
        }
        return s.value;
    }
    Value* find(std::string_view name, std::uint32_t h) {
        if (slots_.empty()) return nullptr;
        if (!h) h = syntax::label_hash(name);
        Slot& s = probe(slots_, name, h);
        return s.key.data() ? &s.value : nullptr;
    }

private:
    struct Slot {
        std::string_view key; // data() == nullptr: empty
        std::uint32_t hash = 0;
        Value value{};
    };
    template <typename Slots>
    static auto& probe(Slots& slots, std::string_view name, std::uint32_t h) {
        const std::size_t mask = slots.size() - 1;
        for (std::size_t i = h & mask;; i = (i + 1) & mask) {
            auto& s = slots[i];
            if (!s.key.data() || (s.hash == h && s.key == name)) return s;
        }
    }
    void grow() {
        std::vector<Slot> old(slots_.empty() ? 2048 : slots_.size() * 2);
        old.swap(slots_);
        for (Slot& s : old)
            if (s.key.data()) probe(slots_, s.key, s.hash) = std::move(s);
    }
    std::vector<Slot> slots_;
    std::size_t used_ = 0;
};

class Resolver {
public:
    Resolver(const syntax::File& file, Diagnostics& diags, const ResolveOptions& options)
        : file_(file), diags_(diags), options_(options) {}

    std::optional<Tree> run();

private:
    const syntax::File& file_;
    Diagnostics& diags_;
    const ResolveOptions& options_;
    // Starts in a block this thread keeps between boards (no fresh pages for each board),
    // then grows from the heap. Declared before everything allocated from it.
    struct ArenaStart {
        ArenaStart();
        ~ArenaStart();
        std::byte* block = nullptr;
        std::size_t size = 0;
    } arena_start_;
    std::pmr::monotonic_buffer_resource memory_{arena_start_.block, arena_start_.size,
                                                std::pmr::new_delete_resource()};
    std::pmr::deque<BNode> arena_{&memory_};
    BNode* root_ = nullptr;
    bool errors_ = false;
    // label -> nodes that carried it at some point, in order (liveness is checked on lookup):
    // the first here, any others in label_more_[more - 1]. A label only properties or values
    // carry has an entry with no node. check_duplicate_labels keeps its first owner of the label
    // in label_owners_[owner - 1]: one table for both, not a second one per board.
    struct LabelNodes {
        BNode* first = nullptr;
        std::uint32_t more = 0;
        std::uint32_t owner = 0;
        BNode* resolved = nullptr; // by_label's answer while labels_settled_
        bool resolved_known = false;
    };
    mutable LabelTable<LabelNodes> label_index_; // mutable: by_label keeps its answers
    std::vector<std::vector<BNode*>> label_more_;
    struct LabelOwner {
        const void* what;
        TextSpan span;
        const BNode* node = nullptr; // a node label: its span is label_span(*node, label)
    };
    std::vector<LabelOwner> label_owners_;
    std::unordered_set<std::uint32_t> used_phandles_;
    std::uint32_t next_phandle_ = 1;
    Value scratch_;

    void error(TextSpan at, std::string message) {
        diags_.error(file_.locate(at), std::move(message));
        errors_ = true;
    }
    void error(const Location& at, std::string message, std::string_view node = {});

    BNode* new_node() {
        BNode* n = &arena_.emplace_back(&memory_);
        n->in_tree = options_.whole_tree; // nodes made after fill_paths (generated ones)
        return n;
    }

    void node_label(BNode* node, std::string_view name, std::uint32_t hash) {
        if (!hash) hash = syntax::label_hash(name);
        add_label(node->labels, name, hash);
        labels_settled_ = false;
        bool made = false;
        LabelNodes& nodes = label_index_.get(name, hash, made);
        if (made || !nodes.first) {
            nodes.first = node;
        } else if (nodes.first != node) {
            labels_on_many_nodes_ = true;
            if (!nodes.more) {
                label_more_.emplace_back();
                nodes.more = static_cast<std::uint32_t>(label_more_.size());
            }
            auto& v = label_more_[nodes.more - 1];
            if (std::find(v.begin(), v.end(), node) == v.end()) v.push_back(node);
        }
    }

    BNode* build(const syntax::Node& sn, BNode* parent);

    template <typename Labels> static void delete_labels(Labels& labels) {
        for (auto& l : labels)
            l.deleted = true;
    }

    static void delete_node(BNode* n);

    void merge(BNode* old, BNode* fresh);

    static bool live(const BNode* n) {
        for (; n; n = n->parent)
            if (n->deleted || n->merged_away) return false;
        return true;
    }

    // `hash`: syntax::label_hash(label), or 0. While no node is added, merged, deleted or
    // labelled (labels_settled_: the reference fixups), a label's node is looked for once.
    BNode* by_label(std::string_view label, std::uint32_t hash) const;
    bool labels_settled_ = false;
    // What a duplicate label needs: a label given to two nodes, or a property or value label.
    // Most boards have neither, and check_duplicate_labels then has nothing to walk.
    bool labels_on_many_nodes_ = false;
    bool property_or_value_labels_ = false;
    BNode* live_carrier(const LabelNodes& entry, std::string_view label) const;

    static BNode* by_path(BNode* from, std::string_view path);

    // `label_hash`: that of the label `ref` starts with, as syntax::Cell has it, or 0.
    BNode* by_ref(std::string_view ref, std::uint32_t label_hash = 0) const;

    void not_found(const syntax::Reference& ref);

    int orphan_count_ = 0;
    std::deque<syntax::Property> orphan_props_;
    syntax::Pool<syntax::Cell> orphan_cells_;       // of orphan_props_
    syntax::Pool<syntax::ValueItem> orphan_values_; // of orphan_props_

    void add_orphan(const syntax::TopLevel& item);
    std::deque<std::string> name_storage_;

    void top_level(const syntax::TopLevel& item);

    // Paths, and whether each node may go into the Tree: `under` (the parent lies under
    // chunk_paths) and `leads` (a chunk path lies below the parent) pass down the tree, so
    // the hundreds of nodes below /soc cost no comparison.
    void fill_paths(BNode& n, std::string_view parent_path, bool under, bool leads);
    // Every node's path in a few blocks instead of a string each (a board has about 400).
    std::string_view keep_path(std::string_view parent, std::string_view name);
    std::vector<std::unique_ptr<char[]>> path_blocks_;
    char* path_free_ = nullptr;
    std::size_t path_left_ = 0;

    Location node_location(const BNode& n) const {
        if (n.first_def) return file_.locate(n.first_def->name_span);
        return {};
    }

    // Pre-order over live nodes, as dtc's check_nodes_props.
    template <typename F> void for_live(BNode& n, F&& f) {
        if (n.deleted) return;
        f(n);
        for (BNode* c : n.children)
            if (!c->deleted) for_live(*c, f);
    }

    void check_duplicates(BNode& root);

    void check_name_properties(BNode& root);

    void check_duplicate_labels();

    TextSpan label_span(const BNode& n, std::string_view label) const;

    std::uint32_t explicit_phandle(BNode& n, std::string_view prop_name);

    std::unordered_map<std::uint32_t, BNode*> phandle_owner_;

    void check_explicit_phandles(BNode& root);

    std::uint32_t node_phandle(BNode& n);

    void fixup_phandle_references(BNode& root);

    void fixup_path_references(BNode& root);

    void omit_unused(BNode& root);

    BNode* root_child(std::string_view name);

    static BNode* child_named(BNode* parent, std::string_view name) {
        for (BNode* c : parent->children)
            if (!c->deleted && c->name == name) return c;
        return nullptr;
    }

    static void append_generated(BNode* n, std::string_view name, const void* data,
                                 std::size_t len);

    void generate_symbols();

    void generate_fixups();

    std::uint32_t guess_boot_cpuid();

    bool chunks_wanted(const BNode& bn) const {
        if (!options_.value_chunks) return false;
        return under_chunk_paths(bn);
    }

    bool locations_wanted(const BNode& bn);

    bool under_chunk_paths(const BNode& bn) const;

    static bool has_property(const BNode& bn, std::string_view name);

    bool leads_to_chunk_path(const BNode& bn) const;

    void convert(const BNode& bn, Node& out);
};

} // namespace cmalign::dt::dts_resolver
