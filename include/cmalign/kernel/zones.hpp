// The memory zones of a kernel (enum zone_type of include/linux/mmzone.h), in the kernel's order.
#pragma once

namespace cmalign::kernel {

enum class ZoneType { dma, dma32, normal, highmem, movable, device };

} // namespace cmalign::kernel
