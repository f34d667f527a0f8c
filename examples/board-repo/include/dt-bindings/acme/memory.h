/* SPDX-License-Identifier: MIT */
/* Memory map of the ACME SoC, shared by its boards (reached through the include prefix -I include,
 * as the kernel's scripts/dtc/include-prefixes provides <dt-bindings/...>). */
#ifndef DT_BINDINGS_ACME_MEMORY_H
#define DT_BINDINGS_ACME_MEMORY_H

#define ACME_DRAM_BASE		0x40000000
#define SZ_1M			0x00100000
#define ACME_CAMERA_POOL_SIZE	(16 * SZ_1M)

#endif
