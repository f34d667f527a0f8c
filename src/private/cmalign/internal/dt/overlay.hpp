// Device tree overlays (.dtso/.dtbo) applied to a base tree exactly as libfdt's
// fdt_overlay_apply() does for `fdtoverlay` (libfdt 1.6.1 and 1.7.0, the kernel's
// scripts/dtc/libfdt/fdt_overlay.c):
//
//   1. every phandle of the overlay is moved past the base's largest one, and the references
//      /__local_fixups__ lists move with them;
//   2. each /__fixups__ label is looked up in the base's /__symbols__ (dtc -@) and its phandle
//      written at every "path:property:offset" the fixup names;
//   2b. (libfdt ≥ 1.7.0) an overlay node that lands on a base node with a phandle takes that
//      phandle (OverlayOptions::keep_target_phandles);
//   3. each /fragment@N/__overlay__ is merged into its target (`target = <phandle>` or
//      `target-path = "/path"` or an alias): properties replace the base's or are inserted
//      first, new subnodes are inserted before the existing children (libfdt's fdt_setprop and
//      fdt_add_subnode order);
//   4. the overlay's /__symbols__ that point into a fragment are added to the base's with the
//      target's path.
//
// Merged properties keep their overlay locations and value chunks, so findings point at the
// overlay line and `fix` rewrites the overlay's digits. A property that came from a blob keeps
// the blob's node path in Property::blob_node so its bytes can be found again.
#pragma once

#include <string>
#include <vector>

#include "cmalign/core/diagnostic.hpp"
#include "cmalign/dt/tree.hpp"

namespace cmalign::dt {

// True when the tree is an overlay: some child of the root has an __overlay__ node.
bool is_overlay(const Tree& tree);

struct OverlayOptions {
    // libfdt ≥ 1.7.0 (the kernel's scripts/dtc/fdtoverlay, which Kbuild runs for composite DTBs;
    // recent U-Boot): an overlay node merged onto a base node that already has a phandle keeps
    // the base's number. false: libfdt 1.6.1 (Debian 12's fdtoverlay), which overwrites it.
    bool keep_target_phandles = true;
};

// Applies `overlay` to `base` in place. false (and an error located in the overlay) when libfdt
// would refuse it; `base` is then unspecified.
bool apply_overlay(Tree& base, const Tree& overlay, Diagnostics& diags,
                   const OverlayOptions& options = {});

// A lone overlay, without its base: the tree the overlay's fragments that target an absolute
// path build on an empty base (the pools it adds under target-path = "/reserved-memory", say).
// `skipped` receives the fragments that need the base (a label target, a path the empty base
// lacks). The root and /reserved-memory get #address-cells/#size-cells only when the overlay
// does not write them: `assumed_cells` then says what was assumed (from the length of `size`,
// else of `reg`, else 2/2).
struct LoneOverlay {
    Tree tree;
    std::vector<std::string> skipped; // "fragment@1 (target = <&label>)"
    std::string assumed_cells;        // empty when the overlay gives them
};
LoneOverlay overlay_without_base(const Tree& overlay);

} // namespace cmalign::dt
