// pretty_json() against nlohmann's own dump(2): the same bytes for every kind of value, the same
// exception for a string that is not UTF-8.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "cmalign/internal/report/json_text.hpp"

using cmalign::report::pretty_json;
using nlohmann::json;

namespace {

json random_value(std::mt19937& rng, int depth) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    auto random_string = [&] {
        // Plain ASCII most of the time, else any byte below 0x80 (controls, quotes,
        // backslashes) and now and then a valid UTF-8 sequence.
        std::string s;
        const int n = pick(12);
        for (int i = 0; i < n; ++i) {
            const int k = pick(10);
            if (k < 6)
                s += static_cast<char>('a' + pick(26));
            else if (k < 9)
                s += static_cast<char>(pick(0x80));
            else
                s += pick(2) ? "\xc3\xa9" : "\xe2\x86\x92"; // é, →
        }
        return s;
    };
    switch (depth > 4 ? 2 + pick(6) : pick(8)) {
    case 0: {
        json o = json::object();
        for (int i = pick(5); i > 0; --i)
            o[random_string()] = random_value(rng, depth + 1);
        return o;
    }
    case 1: {
        json a = json::array();
        for (int i = pick(5); i > 0; --i)
            a.push_back(random_value(rng, depth + 1));
        return a;
    }
    case 2:
        return random_string();
    case 3:
        return static_cast<std::int64_t>(rng()) - static_cast<std::int64_t>(rng()) * 4096;
    case 4:
        return static_cast<std::uint64_t>(rng()) << pick(33);
    case 5:
        return std::ldexp(static_cast<double>(rng()) - 2e9, pick(200) - 100);
    case 6:
        return pick(2) == 1;
    default:
        return nullptr;
    }
}

} // namespace

TEST_CASE("pretty_json writes what dump(2) writes") {
    const json fixed = {
        {"empty_object", json::object()},
        {"empty_array", json::array()},
        {"nested", {{"a", {1, 2, {{"b", json::array({json::object()})}}}}}},
        {"controls", std::string("\x01\b\t\n\f\r\x1f\x7f \"\\ /", 14)},
        {"utf8", "0x400000 → 0x2000000 (é)"},
        {"key \"quoted\"\n", "value"},
        {"int64",
         {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), 0,
          -1}},
        {"uint64", std::numeric_limits<std::uint64_t>::max()},
        {"floats", {1.5, -0.0, 1e300, 0.1, 3.0, std::nan(""), HUGE_VAL}},
        {"booleans", {true, false}},
        {"null", nullptr},
    };
    CHECK(pretty_json(fixed) == fixed.dump(2));
    for (const json& scalar :
         {json(42), json("x"), json(nullptr), json(2.5), json::array(), json::object()})
        CHECK(pretty_json(scalar) == scalar.dump(2));

    std::mt19937 rng(20261203);
    int compared = 0;
    for (int i = 0; i < 2000; ++i) {
        const json value = random_value(rng, 0);
        const std::string ours = pretty_json(value);
        const std::string theirs = value.dump(2);
        if (ours != theirs) {
            FAIL_CHECK("differs for " << theirs << "\n  ours: " << ours);
            break;
        }
        ++compared;
    }
    CHECK(compared == 2000);
}

TEST_CASE("pretty_json rejects a string that is not UTF-8 as dump(2) does") {
    const json bad = {{"path", std::string("board-\xff.dts")}, {"line", 3}};
    std::string theirs;
    try {
        (void)bad.dump(2);
    } catch (const json::type_error& e) {
        theirs = e.what();
    }
    REQUIRE(!theirs.empty());
    CHECK_THROWS_WITH_AS((void)pretty_json(bad), theirs.c_str(), json::type_error);
}

TEST_CASE("pretty_json replaces bad UTF-8 as dump(2) does when asked (explain's serial logs)") {
    const json log = {{"text", std::string("boot\xff ok \xc3")}, {"ok", "é"}};
    const auto replace = json::error_handler_t::replace;
    CHECK(pretty_json(log, replace) == log.dump(2, ' ', false, replace));
    CHECK(pretty_json(log, replace).find("\xef\xbf\xbd") != std::string::npos); // U+FFFD
}

TEST_CASE("pretty_json leaves a document with binary values to nlohmann") {
    const json doc = {{"blob", json::binary({1, 2, 3})}, {"n", 1}};
    CHECK(pretty_json(doc) == doc.dump(2));
}
