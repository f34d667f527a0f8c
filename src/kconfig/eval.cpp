// Kconfig evaluation: sym_calc_value() and friends of scripts/kconfig/symbol.c, the reading of a
// .config by confdata.c (conf_read_simple/conf_read) and the writing by conf_write(), for the
// versions whose rules differ (choices were reworked in 6.11; out-of-range values are kept and
// clamped since 6.8 while earlier kernels drop them).
//
// This file: the parse cache, reading and writing .config; the symbol calculation is
// calc.cpp, the tree's version and the version rows (the Dialect) version.cpp.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unordered_set>

#include <fmt/format.h>

#include "cmalign/internal/core/disk_cache.hpp"
#include "cmalign/internal/core/integer.hpp"
#include "cmalign/internal/core/quote.hpp"
#include "cmalign/internal/kconfig/disk_cache.hpp"
#include "cmalign/internal/kconfig/evaluator.hpp"
#include "cmalign/internal/kconfig/line_parser.hpp"

namespace cmalign::kconfig {

using namespace model;

std::string srcarch_of(const std::string& arch) {
    // The top Makefile's SRCARCH mapping, for any ARCH (also those cmalign does not model); the
    // kernel layer's arch table asks it for its arches' directories (kernel::arch_dir()).
    if (arch == "i386" || arch == "x86_64") return "x86";
    if (arch == "sparc32" || arch == "sparc64") return "sparc";
    if (arch == "parisc64") return "parisc";
    if (arch == "sh64") return "sh";
    return arch;
}

namespace {

// ------------------------------------------------------------------------------------------
// parse cache: one parsed tree per (tree, arch, environment, shell mode), kept while no file
// it read has changed; at most max_cached_trees, the least recently used dropped first (a parsed
// arm64 tree holds about 17 MB: a long-running process walking every arch must not keep all).
constexpr std::size_t max_cached_trees = 4;

struct CacheEntry {
    std::string key;
    std::shared_ptr<const Tree> tree;
    // Each file as the parse read it (the stamps its reads noted in the open run: no second
    // stat of 1,700 files), the top Makefile as now.
    std::vector<disk_cache::Stamp> stamps;
};

std::mutex cache_mutex;
std::vector<CacheEntry> cache;

bool still_valid(const CacheEntry& e) {
    return std::all_of(e.stamps.begin(), e.stamps.end(),
                       [](const disk_cache::Stamp& s) { return disk_cache::unchanged(s); });
}

} // namespace

namespace evaluator {

void Evaluator::read_inputs(const Config& inputs, const std::vector<std::string>& file_order,
                            Diagnostics& diags) {
    // conf_read_simple() in the order the lines were read: files in order, lines in order,
    // --set last. Entries a program set() without a line of their own come first, in the order
    // of their files.
    auto rank = [&](const Entry& e) {
        if (e.where.file == "--set") return static_cast<long>(file_order.size()) + 1;
        auto it = std::find(file_order.begin(), file_order.end(), e.where.file);
        return it == file_order.end() ? static_cast<long>(file_order.size())
                                      : static_cast<long>(it - file_order.begin());
    };
    std::unordered_set<std::string_view> recorded;
    for (const auto& a : inputs.assignments())
        recorded.insert(a.name);
    std::vector<std::pair<long, const Entry*>> ranked;
    for (const auto& [name, e] : inputs.entries())
        if (!recorded.count(name)) ranked.emplace_back(rank(e), &e);
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        if (a.second->where.file != b.second->where.file)
            return a.second->where.file < b.second->where.file;
        return a.second->where.line < b.second->where.line;
    });
    const detail::ReadRules rules = detail::read_rules(t_.version_major, t_.version_minor);

    auto lookup = [&](const std::string& name) {
        int s = t_.find(name);
        // conf_read_simple(): a name no symbol has is ignored without a word; a choice's own
        // symbol and the constants y/m/n are never set from a .config.
        if (s == none || t_.symbols[s].type == Type::unknown ||
            (t_.symbols[s].flags & sym_choice) || s == t_.sym_yes || s == t_.sym_mod ||
            s == t_.sym_no)
            return none;
        return s;
    };
    auto value_type = [](Type type) {
        switch (type) {
        case Type::boolean:
            return detail::ValueType::boolean;
        case Type::tristate:
            return detail::ValueType::tristate;
        case Type::integer:
            return detail::ValueType::integer;
        case Type::hex:
            return detail::ValueType::hex;
        default:
            return detail::ValueType::string;
        }
    };
    auto earlier = [&](int s) -> std::string {
        const Entry* e = st_[s].has_user ? st_[s].input : nullptr;
        if (!e) return {};
        std::string shown =
            e->quoted ? "\"" + detail::printable(e->value) + "\"" : detail::printable(e->value);
        return fmt::format("{} from {}:{}", shown, e->where.file, e->where.line);
    };
    auto apply = [&](int s, const Entry* e) {
        const Symbol& sym = t_.symbols[s];
        SymState& st = st_[s];
        if (sym.type == Type::boolean || sym.type == Type::tristate)
            st.user_tri = e->value == "y" ? Tri::yes : e->value == "m" ? Tri::mod : Tri::no;
        else
            st.user_val = e->value;
        st.has_user = true;
        st.input = e;
        if ((sym.flags & sym_choice_value) && sym.choice_menu != none) {
            if (old_choices_) {
                if (st.user_tri == Tri::yes) st_[t_.menus[sym.choice_menu].sym].user_choice = s;
            } else {
                auto& pr = priority_[sym.choice_menu];
                pr.erase(std::remove(pr.begin(), pr.end(), s), pr.end());
                pr.insert(pr.begin(), s);
            }
        }
    };
    // A value given by a program or --set: y/m/n by its first letter, a string also unquoted.
    auto apply_entry = [&](int s, const std::string& value, bool quoted, const Location& where) {
        const Symbol& sym = t_.symbols[s];
        detail::Verdict v;
        if (sym.type == Type::string) {
            v.accepted = true;
            v.value = value;
            v.quoted = true;
        } else if (!quoted) {
            v = detail::value_for(value_type(sym.type), sym.name, value, LineForm::value, rules);
        } else {
            v.kconfig_warning = fmt::format("symbol value '\"{}\"' invalid for {}",
                                            detail::printable(value), sym.name);
        }
        if (!v.accepted) {
            diags.warning(where, detail::rejected_message(v, sym.name, earlier(s)),
                          "config-invalid-value");
            return;
        }
        read_entries_.push_back(Entry{sym.name, std::move(v.value), v.quoted, where});
        apply(s, &read_entries_.back());
    };
    for (const auto& [order, e] : ranked)
        if (int s = lookup(e->name); s != none) apply_entry(s, e->value, e->quoted, e->where);
    for (const auto& a : inputs.assignments()) {
        int s = lookup(a.name);
        if (s == none) continue;
        const Symbol& sym = t_.symbols[s];
        if (a.form == LineForm::entry) {
            apply_entry(s, a.text, a.quoted, a.where);
            continue;
        }
        // conf_set_sym_val() with the symbol's own type (a tristate stays one here even with
        // MODULES=n: sym_calc_value() lowers m later).
        detail::Verdict v =
            detail::value_for(value_type(sym.type), sym.name, a.text, a.form, rules);
        if (!v.accepted) {
            if (!a.reported)
                diags.warning(a.where, detail::rejected_message(v, sym.name, earlier(s)),
                              v.kconfig_warning.empty() ? "config-ignored-value"
                                                        : "config-invalid-value");
            continue;
        }
        read_entries_.push_back(
            Entry{sym.name, std::move(v.value), v.quoted, {a.where.file, a.where.line, 1}});
        apply(s, &read_entries_.back());
    }
}

std::string Evaluator::write(Config& out, const std::string& heading) {
    // conf_write()
    std::string text = "#\n# Automatically generated file; DO NOT EDIT.\n# " + heading + "\n#\n";
    bool need_newline = false;
    auto emit = [&](int s) {
        const Symbol& sym = t_.symbols[s];
        SymState& st = st_[s];
        Entry e;
        e.name = sym.name;
        bool is_bool = sym.type == Type::boolean || sym.type == Type::tristate;
        e.value = is_bool ? string_value(s) : st.val;
        e.quoted = sym.type == Type::string;
        if (is_bool && e.value == "n")
            text += "# CONFIG_" + sym.name + " is not set\n";
        else if (sym.type == Type::string)
            text += "CONFIG_" + sym.name + "=" + strings::quoted(st.val) + "\n";
        else
            text += "CONFIG_" + sym.name + "=" + e.value + "\n";
        if (st.input && st.input->value == e.value) {
            e.where = st.input->where;
        } else if (st.decided_prop != none) {
            const Location& w = t_.props[st.decided_prop].where;
            e.where = w;
            out.decided_by[sym.name] = st.decided_by;
        } else {
            // No property gave a value: the type's default (n, 0, "") or a user value kconfig
            // could not keep; name the symbol's definition.
            e.where = t_.menus[sym.menus.front()].where;
            out.decided_by[sym.name] = st.input ? "dependencies not met" : "no default";
        }
        out.set(std::move(e));
    };
    int m = t_.menus[0].children.empty() ? none : 0;
    // Iterative depth-first walk over menus[0]'s descendants.
    struct Frame {
        int menu;
        std::size_t next;
    };
    std::vector<Frame> stack{{0, 0}};
    (void)m;
    auto end_check = [&](int menu) {
        const Menu& mm = t_.menus[menu];
        // Before 5.18 conf_write() wrote "# end of" only on its way up from a menu's last child.
        if (!end_of_empty_menu_ && mm.children.empty()) return;
        if (mm.sym == none && menu != 0 && mm.prompt != none &&
            t_.props[mm.prompt].kind == PropKind::menu && menu_visible(menu)) {
            text += "# end of " + t_.props[mm.prompt].text + "\n";
            need_newline = true;
        }
    };
    while (!stack.empty()) {
        Frame& f = stack.back();
        const Menu& parent = t_.menus[f.menu];
        if (f.next >= parent.children.size()) {
            int done = f.menu;
            stack.pop_back();
            if (done != 0) end_check(done);
            continue;
        }
        int c = parent.children[f.next++];
        const Menu& menu = t_.menus[c];
        if (menu.sym == none) {
            if (menu_visible(c)) {
                text += "\n#\n# " + t_.props[menu.prompt].text + "\n#\n";
                need_newline = false;
            }
        } else if (!(t_.symbols[menu.sym].flags & sym_choice) && !st_[menu.sym].written &&
                   !(t_.symbols[menu.sym].flags & (sym_transitional | sym_no_write))) {
            calc(menu.sym);
            if (st_[menu.sym].write) {
                if (need_newline) {
                    text += "\n";
                    need_newline = false;
                }
                st_[menu.sym].written = true;
                if (t_.symbols[menu.sym].type != Type::unknown) emit(menu.sym);
            }
        }
        stack.push_back({c, 0});
    }
    return text;
}

} // namespace evaluator

namespace {

using evaluator::Evaluator;

} // namespace

void clear_cache() {
    std::lock_guard lock(cache_mutex);
    cache.clear();
}

std::size_t cached_trees() {
    std::lock_guard lock(cache_mutex);
    return cache.size();
}

namespace {

// The in-process parse cache, then the evaluation: what evaluate() computes.
std::optional<Evaluation> evaluate_parsed(const ParseInput& in, const TreeVersion& tree_version,
                                          const std::string& key, const Config& inputs,
                                          const EvalOptions& options,
                                          std::vector<std::string>& files, Diagnostics& diags) {
    const TreeVersion* version = &tree_version;
    const std::string& tree = in.tree;
    const std::string& arch = in.arch;
    std::shared_ptr<const Tree> parsed;
    {
        std::lock_guard lock(cache_mutex);
        for (auto it = cache.begin(); it != cache.end(); ++it) {
            if (it->key != key) continue;
            if (still_valid(*it)) {
                parsed = it->tree;
                std::rotate(it, it + 1, cache.end()); // most recently used last
            } else {
                cache.erase(it);
            }
            break;
        }
    }
    if (!parsed) {
        auto fresh = std::make_shared<Tree>();
        fresh->version_major = version->version.major;
        fresh->version_minor = version->version.minor;
        if (!parse(in, *fresh, diags)) return std::nullopt;
        CacheEntry entry;
        entry.key = key;
        bool stamped = true; // a file gone already, or not a regular one: nothing to keep
        auto stamped_files = fresh->files;
        stamped_files.push_back(tree + "/Makefile");
        for (const auto& f : stamped_files) {
            auto s = disk_cache::stamp(f);
            if (!s) {
                stamped = false;
                break;
            }
            entry.stamps.push_back(std::move(*s));
        }
        entry.tree = fresh;
        parsed = fresh;
        if (stamped) {
            std::lock_guard lock(cache_mutex);
            cache.push_back(std::move(entry));
            while (cache.size() > max_cached_trees)
                cache.erase(cache.begin());
        }
    }

    auto dialect = dialect_of(version->version.major, version->version.minor);
    Evaluator ev(*parsed, dialect);
    std::vector<std::string> order = options.input_order;
    ev.read_inputs(inputs, order, diags);
    ev.calc_all();

    Evaluation out;
    out.arch = arch;
    out.srcarch = in.srcarch;
    out.kernel_version = version->text;
    out.assumptions = parsed->assumptions;
    const auto& root = parsed->menus[0];
    std::string heading =
        root.prompt != none ? parsed->props[root.prompt].text : "Linux Kernel Configuration";
    out.config.header_arch = arch;
    out.config.header_version = version->text;
    out.dotconfig = ev.write(out.config, heading);
    files = parsed->files;
    files.push_back(tree + "/Makefile");
    return out;
}

} // namespace

std::optional<Evaluation> evaluate(const std::string& tree_dir, const std::string& arch,
                                   const Config& inputs, const EvalOptions& options,
                                   Diagnostics& diags) {
    std::string tree = tree_dir;
    while (tree.size() > 1 && tree.back() == '/')
        tree.pop_back();
    auto version = read_tree_version(tree, diags);
    if (!version) return std::nullopt;
    // The reader guessed types it did not know (config-type-assumed); the tree knows them, and
    // read_inputs() says what its kconfig does with those lines instead.
    std::erase_if(diags.items(),
                  [](const Diagnostic& d) { return d.check == "config-type-assumed"; });
    ParseInput in;
    in.tree = tree;
    in.arch = arch;
    in.srcarch = srcarch_of(arch);
    in.kernel_version = version->text;
    in.options = options;
    {
        std::error_code ec;
        if (!std::filesystem::is_directory(tree + "/arch/" + in.srcarch, ec)) {
            diags.error({}, fmt::format("the kernel tree {} has no arch/{} (from ARCH={})", tree,
                                        in.srcarch, arch));
            return std::nullopt;
        }
    }
    std::string key = tree + '\0' + arch + '\0' + (options.run_shell ? "1" : "0");
    for (const auto& [k, v] : options.env)
        key += '\0' + k + '=' + v;
    for (const auto& row : limit_table()) // a tree parsed under larger limits is not reused
        key += fmt::format("\0{}={}", row.name, *limit_value(options.limits, row.name));

    // The on-disk cache: the whole evaluation with what it reported, while no file it read
    // changed (internal/kconfig/disk_cache.hpp).
    const bool on_disk = !options.cache_dir.empty() && !options.run_shell;
    std::string disk_key;
    if (on_disk) {
        disk_key = detail::disk_key(tree, arch, inputs, options, version->text);
        if (auto hit = detail::load_evaluation(options.cache_dir, disk_key, diags)) return hit;
    }
    Diagnostics reported;
    std::vector<std::string> files;
    auto out = evaluate_parsed(in, *version, key, inputs, options, files, reported);
    if (out) out->sources = files;
    diags.append(reported);
    if (on_disk && out && !reported.has_errors())
        detail::store_evaluation(options.cache_dir, disk_key, *out, reported.items(), files);
    return out;
}

std::optional<Config> olddefconfig(const std::string& tree, const std::string& arch,
                                   const Config& inputs, const EvalOptions& options,
                                   Diagnostics& diags) {
    auto r = evaluate(tree, arch, inputs, options, diags);
    if (!r) return std::nullopt;
    for (const auto& a : r->assumptions)
        diags.note(a.where,
                   fmt::format("assumed toolchain probe: '{}' → '{}' (--kconfig-shell runs it)",
                               a.command, a.result),
                   "kconfig-assumption");
    return std::move(r->config);
}

} // namespace cmalign::kconfig
