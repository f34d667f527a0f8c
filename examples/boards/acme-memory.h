/* SPDX-License-Identifier: MIT */
#ifndef ACME_MEMORY_H
#define ACME_MEMORY_H

#define ACME_DRAM_BASE		0x40000000
#define SZ_2M			0x00200000
#define ACME_CAMERA_POOL_SIZE	(8 * SZ_2M)

#endif
