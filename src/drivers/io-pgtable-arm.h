/* io-pgtable-arm.h — private definitions of the LPAE stage-1 format: descriptor bits (Arm ARM
 * D8.3 "Translation table descriptor formats", Linux io-pgtable-arm.c names) and the table's
 * state. It is not an API: include/iommulab/io_pgtable.h is; the SMMU model has its own walker.
 */
#ifndef IOMMULAB_IO_PGTABLE_ARM_H
#define IOMMULAB_IO_PGTABLE_ARM_H

#include <stdint.h>

#include <iommulab/io_pgtable.h>

#define ARM_LPAE_MAX_LEVELS 4
#define ARM_LPAE_MAX_ADDR_BITS 48 /* 52-bit PA/VA not implemented */

/* Descriptor type, bits [1:0] */
#define ARM_LPAE_PTE_TYPE_MASK 0x3ull
#define ARM_LPAE_PTE_TYPE_BLOCK 1ull /* levels 0..2 leaf */
#define ARM_LPAE_PTE_TYPE_TABLE 3ull /* levels 0..2 next-level pointer */
#define ARM_LPAE_PTE_TYPE_PAGE 3ull  /* level 3 leaf */

/* Lower attributes */
#define ARM_LPAE_PTE_ATTRINDX_SHIFT 2   /* AttrIndx[2:0], bits [4:2] */
#define ARM_LPAE_PTE_NS (1ull << 5)
#define ARM_LPAE_PTE_AP_UNPRIV (1ull << 6) /* AP[1]: EL0 (unprivileged) access */
#define ARM_LPAE_PTE_AP_RDONLY (1ull << 7) /* AP[2]: read-only */
#define ARM_LPAE_PTE_SH_SHIFT 8            /* SH[1:0], bits [9:8] */
#define ARM_LPAE_PTE_SH_OS (2ull << 8)
#define ARM_LPAE_PTE_SH_IS (3ull << 8)
#define ARM_LPAE_PTE_AF (1ull << 10)
#define ARM_LPAE_PTE_nG (1ull << 11)
/* Upper attributes */
#define ARM_LPAE_PTE_XN (3ull << 53)       /* PXN | UXN */

/* Output address, bits [47:12] (48-bit OA). */
#define ARM_LPAE_PTE_ADDR_MASK 0x0000fffffffff000ull
/* Software bit (IGNORED by the walker, Arm ARM D8.3): a table descriptor already cleaned to
 * the point of coherency for a non-coherent walker (Linux ARM_LPAE_PTE_SW_SYNC). */
#define ARM_LPAE_PTE_SW_SYNC (1ull << 55)

/* MAIR slots written for stage 1 (Linux order) */
#define ARM_LPAE_MAIR_ATTR_IDX_NC 0
#define ARM_LPAE_MAIR_ATTR_IDX_CACHE 1
#define ARM_LPAE_MAIR_ATTR_IDX_DEV 2
#define ARM_LPAE_MAIR_ATTR_IDX_INC_OCACHE 3
#define ARM_LPAE_MAIR_ATTR_NC 0x44ull
#define ARM_LPAE_MAIR_ATTR_WBRWA 0xffull
#define ARM_LPAE_MAIR_ATTR_DEVICE 0x04ull
#define ARM_LPAE_MAIR_ATTR_INC_OWBRWA 0xf4ull

/* TCR/CD encodings */
#define ARM_LPAE_TCR_TG0_4K 0
#define ARM_LPAE_TCR_TG0_64K 1
#define ARM_LPAE_TCR_TG0_16K 2
#define ARM_LPAE_TCR_SH_OS 2
#define ARM_LPAE_TCR_SH_IS 3
#define ARM_LPAE_TCR_RGN_NC 0
#define ARM_LPAE_TCR_RGN_WBWA 1

struct ilab_io_pgtable {
	struct ilab_io_pgtable_cfg cfg;
	struct ilab_mem *mem;
	int node;               /* cfg->node, or -1: then charges look the node up */
	unsigned pg_shift;      /* log2(granule) */
	unsigned bits_per_level;
	unsigned start_level;
	unsigned pgd_bits;
	unsigned tbl_order;     /* page order of a granule-sized table */
	unsigned pgd_order;
	ilab_pa_t pgd_pa;
	uint64_t *pgd;
	void *stats;            /* plat per-CPU struct ilab_io_pgtable_stats */
};

#endif /* IOMMULAB_IO_PGTABLE_ARM_H */
