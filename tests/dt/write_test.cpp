// Tree output: the JSON of docs/json.md and DTS text (which must compile back to the same tree).
#include <doctest/doctest.h>

#include "support/material.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cmalign/internal/dt/dts.hpp"
#include "cmalign/internal/dt/tree_json.hpp"
#include "cmalign/internal/dt/write.hpp"

using namespace cmalign;
using namespace cmalign::dt;

namespace {

const char* sample_dts = R"(/dts-v1/;
/memreserve/ 0x10000000 0x4000;
/ {
    model = "Board \"X\"\twith\\escapes";
    compatible = "vendor,board", "vendor,soc";
    #address-cells = <2>;
    #size-cells = <2>;
    reserved-memory {
        #address-cells = <2>;
        #size-cells = <2>;
        ranges;
        cma: linux,cma {
            compatible = "shared-dma-pool";
            reusable;
            size = <0x0 0x2000000>;
        };
    };
    dev { memory-region = <&cma>; odd = [01 02 03]; bits = /bits/ 16 <1 2 3>; empty-str = ""; };
};
)";

struct Built {
    std::unique_ptr<Preprocessed> text;
    std::optional<syntax::File> file;
    std::optional<Tree> tree;
    Diagnostics diags;
    FileCache cache;
};

std::unique_ptr<Built> build(const std::string& source, const std::string& name) {
    auto b = std::make_unique<Built>();
    b->text = std::make_unique<Preprocessed>(identity(make_source(name, source)));
    b->file = parse(*b->text, {}, b->cache, b->diags);
    if (b->file) b->tree = resolve(*b->file, b->diags);
    return b;
}

void same_nodes(const Node& a, const Node& b) {
    CHECK(a.name == b.name);
    REQUIRE(a.properties.size() == b.properties.size());
    for (std::size_t i = 0; i < a.properties.size(); ++i) {
        CHECK(a.properties[i].name == b.properties[i].name);
        CHECK(a.properties[i].value == b.properties[i].value);
    }
    REQUIRE(a.children.size() == b.children.size());
    for (std::size_t i = 0; i < a.children.size(); ++i)
        same_nodes(a.children[i], b.children[i]);
}

} // namespace

TEST_CASE("write: the JSON of docs/json.md of the whole tree and of a subtree") {
    auto b = build(sample_dts, "board.dts");
    REQUIRE(b->tree);
    auto json = tree_json(*b->tree);
    REQUIRE(json);
    const auto& nodes = (*json)["nodes"];
    REQUIRE(nodes.size() == 4);
    CHECK(nodes[0]["path"] == "/");
    CHECK(nodes[1]["path"] == "/reserved-memory");
    CHECK(nodes[2]["path"] == "/reserved-memory/linux,cma");
    CHECK(nodes[2]["file"] == "board.dts");
    CHECK(nodes[2]["line"] == 12);
    const auto& props = nodes[2]["properties"];
    REQUIRE(props.size() == 4);
    CHECK(props[2]["name"] == "size");
    CHECK(props[2]["value"] == "0000000002000000");
    CHECK(props[2]["refs"] == false);
    CHECK(props[1]["value"] == "");
    CHECK(props[3]["name"] == "phandle");
    CHECK(nodes[3]["properties"][0]["refs"] == true);
    CHECK(nodes[3]["properties"][0]["value"] == "00000001");

    auto sub = tree_json(*b->tree, "/reserved-memory/");
    REQUIRE(sub);
    REQUIRE((*sub)["nodes"].size() == 2);
    CHECK((*sub)["nodes"][0]["path"] == "/reserved-memory");
    CHECK((*sub)["nodes"][1]["path"] == "/reserved-memory/linux,cma");
    CHECK_FALSE(tree_json(*b->tree, "/nope"));
}

TEST_CASE("write: DTS text is what dtc would print and parses back to the same tree") {
    auto b = build(sample_dts, "board.dts");
    REQUIRE(b->tree);
    auto text = tree_dts(*b->tree);
    REQUIRE(text);
    CHECK(text->find("/memreserve/\t0x0000000010000000 0x0000000000004000;") != std::string::npos);
    CHECK(text->find("model = \"Board \\\"X\\\"\\twith\\\\escapes\";") != std::string::npos);
    CHECK(text->find("compatible = \"vendor,board\", \"vendor,soc\";") != std::string::npos);
    CHECK(text->find("cma: linux,cma {") != std::string::npos);
    CHECK(text->find("size = <0x00 0x2000000>;") != std::string::npos);
    CHECK(text->find("odd = [01 02 03];") != std::string::npos);
    CHECK(text->find("\t\treusable;\n") != std::string::npos);
    auto again = build(*text, "again.dts");
    REQUIRE_MESSAGE(
        again->tree,
        (again->diags.items().empty() ? std::string() : format_gcc(again->diags.items().front())));
    same_nodes(b->tree->root, again->tree->root);
    CHECK(again->tree->memreserve.size() == 1);

    auto sub = tree_dts(*b->tree, "/reserved-memory/linux,cma");
    REQUIRE(sub);
    auto sub_again = build(*sub, "sub.dts");
    REQUIRE(sub_again->tree);
    const Node* cma = sub_again->tree->find("/reserved-memory/linux,cma");
    REQUIRE(cma);
    same_nodes(*b->tree->find("/reserved-memory/linux,cma"), *cma);
}

TEST_CASE("write: dtc compiles our DTS output to the same bytes") {
    if (!cmalign::test::have_program("dtc")) return;
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "cmalign-write-test";
    fs::create_directories(dir);
    std::ofstream(dir / "in.dts") << sample_dts;
    auto b = build(sample_dts, "in.dts");
    REQUIRE(b->tree);
    std::ofstream(dir / "ours.dts") << *tree_dts(*b->tree);
    const std::string cmd = "dtc -q -O dtb -o '" + (dir / "a.dtb").string() + "' '" +
                            (dir / "in.dts").string() + "' && dtc -q -O dtb -o '" +
                            (dir / "b.dtb").string() + "' '" + (dir / "ours.dts").string() + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream a(dir / "a.dtb", std::ios::binary);
    std::ifstream c(dir / "b.dtb", std::ios::binary);
    std::string da((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
    std::string dc((std::istreambuf_iterator<char>(c)), std::istreambuf_iterator<char>());
    CHECK(da == dc);
    fs::remove_all(dir);
}

TEST_CASE("write: value shapes as dtc guesses them") {
    CHECK(guess_shape({}) == ValueShape::empty);
    CHECK(guess_shape({'a', 0}) == ValueShape::strings);
    CHECK(guess_shape({'a', 0, 'b', 0}) == ValueShape::strings);
    CHECK(guess_shape({0, 0, 0, 1}) == ValueShape::cells);
    CHECK(guess_shape({0, 0, 0}) == ValueShape::bytes);
    CHECK(guess_shape({0}) == ValueShape::bytes);
    CHECK(to_hex({0x00, 0xab, 0x10}) == "00ab10");
}
