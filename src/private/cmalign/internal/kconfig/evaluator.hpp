// The Kconfig evaluator's state (class Evaluator, one SymState per symbol), shared by
// eval.cpp and calc.cpp. Not part of the public interface.
#pragma once

#include <cctype>
#include <deque>
#include <string>
#include <vector>

#include "cmalign/internal/kconfig/model.hpp"

namespace cmalign::kconfig::evaluator {

using namespace model;

struct SymState {
    Tri tri = Tri::no;
    std::string val;
    bool valid = false;
    bool write = false;
    bool written = false;
    Tri visible = Tri::no, dir = Tri::yes, rev = Tri::no, implied = Tri::no;
    bool has_user = false;
    Tri user_tri = Tri::no;
    std::string user_val;
    const Entry* input = nullptr;
    int decided_prop = none;
    std::string decided_by;
    int user_choice = none; // 6.1 choices: the member the .config set to y
    int choice_sel = none;  // 6.1 choices: the member chosen
    // 6.1 SYMBOL_NEED_SET_CHOICE_VALUES: a choice value computes its choice first; a choice sets
    // its unset members to a user n once computed (conf_set_all_new_symbols(def_default)).
    bool need_set_choice = false;
    // 6.1 choices: SYMBOL_DEF_USER of the choice. conf_read_simple() sets it on every choice;
    // sym_calc_choice() clears it when a visible member has no value of its own.
    bool choice_has_value = true;
};

inline bool string_valid(Type type, const std::string& s) {
    // sym_string_valid()
    const char* str = s.c_str();
    char ch;
    switch (type) {
    case Type::string:
        return true;
    case Type::integer:
        ch = *str++;
        if (ch == '-') ch = *str++;
        if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
        if (ch == '0' && *str != 0) return false;
        while ((ch = *str++))
            if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
        return true;
    case Type::hex:
        if (str[0] == '0' && (str[1] == 'x' || str[1] == 'X')) str += 2;
        ch = *str++;
        do {
            if (!std::isxdigit(static_cast<unsigned char>(ch))) return false;
        } while ((ch = *str++));
        return true;
    default:
        return false;
    }
}

class Evaluator {
public:
    Evaluator(const Tree& tree, const Dialect& dialect)
        : t_(tree), old_choices_(dialect.choice_symbols),
          drop_out_of_range_(dialect.drop_out_of_range),
          empty_number_default_(dialect.empty_number_default),
          end_of_empty_menu_(dialect.end_of_empty_menu), st_(tree.symbols.size()),
          prop_tri_(tree.props.size(), Tri::no), priority_(tree.menus.size()) {
        for (int s : {t_.sym_yes, t_.sym_mod, t_.sym_no}) {
            st_[s].valid = true;
            st_[s].val = t_.symbols[s].name;
        }
        st_[t_.sym_yes].tri = Tri::yes;
        st_[t_.sym_mod].tri = Tri::mod;
        for (std::size_t m = 0; m < t_.menus.size(); ++m)
            if (t_.menus[m].is_choice) priority_[m] = t_.menus[m].choice_members;
    }

    void read_inputs(const Config& inputs, const std::vector<std::string>& file_order,
                     Diagnostics& diags);
    void calc_all();
    std::string write(Config& out, const std::string& heading);

private:
    const Tree& t_;
    bool old_choices_;
    bool drop_out_of_range_;
    bool empty_number_default_;
    bool end_of_empty_menu_;
    std::vector<SymState> st_;
    std::vector<Tri> prop_tri_;
    std::vector<std::vector<int>> priority_; // 6.12 choices: members in priority order
    Tri modules_val_ = Tri::no;
    std::deque<Entry> read_entries_; // the values read_inputs() took (SymState::input)

    Type get_type(int s) const {
        Type type = t_.symbols[s].type;
        if (type == Type::tristate) {
            if (old_choices_ && (t_.symbols[s].flags & sym_choice_value) &&
                st_[s].visible == Tri::yes)
                return Type::boolean;
            if (modules_val_ == Tri::no) return Type::boolean;
        }
        return type;
    }
    const std::string& string_value(int s) {
        static const std::string n = "n", m = "m", y = "y";
        Type type = t_.symbols[s].type;
        if (type == Type::boolean || type == Type::tristate) {
            Tri v = st_[s].tri;
            return v == Tri::no ? n : v == Tri::mod ? m : y;
        }
        return st_[s].val;
    }
    Tri eval(int e);
    Tri compare(const Expr& x);
    void calc(int s);
    void calc_inner(int s); // sym_calc_value() proper; calc() adds the trace
    Tri calc_tristate(int s, int& default_prop);
    Tri tristate_default(int s, int& default_prop);
    void invalidate_all(); // sym_clear_all_valid()
    std::string trace_name(int s) const;
    void calc_visibility(int s);
    int first_visible_prop(int s, PropKind kind);
    void validate_range(int s);
    bool within_range(int s, const std::string& v);
    int calc_choice(int choice_menu);
    int choice_default(int choice_menu);
    void sub_entries(int menu, std::vector<int>& syms) const;
    void choice_values(int choice_menu, std::vector<int>& syms) const; // 6.1 P_CHOICE list
    bool menu_visible(int m);
    void note_select(int s, Tri before);
};

} // namespace cmalign::kconfig::evaluator
