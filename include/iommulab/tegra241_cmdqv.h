/* tegra241_cmdqv.h — register map of NVIDIA's Tegra241 CMDQ-Virtualisation extension of SMMUv3
 * (the Grace SoC's CMDQV): a global config page, virtual interfaces (VINTFs) and virtual command
 * queues (VCMDQs) consumed by the SMMU's command processor. Offsets and fields as Linux's
 * tegra241-cmdqv.c (6.12) and QEMU's hw/arm/tegra241-cmdqv.h use them; NVIDIA publishes no
 * specification. It is not the model (smmuv3.h: cfg.cmdqv_vcmdqs) nor the driver.
 *
 * Offsets are relative to the CMDQV window, which this model places inside the SMMU's register
 * window at smmu_cmdqv_offset(s) (on Grace it is a separate ACPI device, NVDA200C).
 */
#ifndef IOMMULAB_TEGRA241_CMDQV_H
#define IOMMULAB_TEGRA241_CMDQV_H

/* Window layout: 64 KiB pages. */
#define CMDQV_CONFIG_PAGE 0x00000u
#define CMDQV_VCMDQ_PAGE0 0x10000u /* direct VCMDQ aperture: control and status */
#define CMDQV_VCMDQ_PAGE1 0x20000u /* direct VCMDQ aperture: BASE, CONS_INDX_BASE */
#define CMDQV_VINTF_PAGES 0x30000u /* VINTF i: page0 at + 128 KiB * i, page1 64 KiB later */
#define CMDQV_VINTF_STRIDE 0x20000u
#define CMDQV_VCMDQ_STRIDE 0x80u   /* one VCMDQ's registers in a page */
#define CMDQV_WINDOW_SIZE(nvintf) (CMDQV_VINTF_PAGES + CMDQV_VINTF_STRIDE * (nvintf))

/* Global registers (config page). */
#define CMDQV_CONFIG 0x0000u
#define  CMDQV_CONFIG_EN 0x1u               /* [0] */
#define  CMDQV_CONFIG_CONS_DRAM_EN (1u << 20) /* write CONS to CONS_INDX_BASE after each command */
#define  CMDQV_CONFIG_MASK 0x1FFFFFu        /* EN, PER_CMD_OFFSET, MAX_CLK/CMD_BATCH, CONS_DRAM_EN */
#define CMDQV_PARAM 0x0004u                 /* RO */
#define  CMDQV_PARAM_VER_SHIFT 0            /* [3:0] */
#define  CMDQV_PARAM_NUM_VCMDQ_LOG2_SHIFT 4 /* [7:4] */
#define  CMDQV_PARAM_NUM_VINTF_LOG2_SHIFT 8 /* [11:8] */
#define CMDQV_STATUS 0x0008u
#define  CMDQV_STATUS_ENABLED 0x1u
#define CMDQV_VI_ERR_MAP 0x0014u            /* 2 x 32 bits: VINTF v has a VCMDQ in error */
#define CMDQV_VI_INT_MASK 0x001Cu           /* 2 x 32 bits: 1 = no interrupt for VINTF v */
#define CMDQV_CMDQ_ERR_MAP 0x0024u          /* 4 x 32 bits: VCMDQ q in error */
#define CMDQV_CMDQ_ALLOC(q) (0x0200u + 4u * (q))
#define  CMDQV_ALLOC_ALLOCATED 0x1u         /* [0] */
#define  CMDQV_ALLOC_LVCMDQ_SHIFT 1         /* [7:1] logical index in the VINTF */
#define  CMDQV_ALLOC_VINTF_SHIFT 15         /* [20:15] */
#define  CMDQV_ALLOC_MASK 0x1F80FFu

/* VINTF v's registers (config page). */
#define CMDQV_VINTF(v) (0x1000u + 0x100u * (v))
#define VINTF_CONFIG 0x00u
#define  VINTF_CONFIG_EN 0x1u               /* [0] */
#define  VINTF_CONFIG_VMID_SHIFT 1          /* [16:1] */
#define  VINTF_CONFIG_HYP_OWN (1u << 17)    /* 0: guest-owned, a restricted command set */
#define VINTF_STATUS 0x04u
#define  VINTF_STATUS_ENABLED 0x1u          /* [0] */
#define  VINTF_STATUS_VCMDQ_ERR (1u << 1)   /* STATUS [3:1] = 1: a VCMDQ error */
#define  VINTF_STATUS_NUM_LVCMDQ_SHIFT 16   /* [23:16] */
#define VINTF_LVCMDQ_ERR_MAP 0xC0u          /* 4 x 32 bits (Linux reads them as 2 x 64) */

/* One VCMDQ's registers: page0 (direct or through its VINTF) ... */
#define VCMDQ_CONS 0x00u                    /* RD [19:0], ERR [30:24] */
#define  VCMDQ_CONS_ERR_SHIFT 24
#define  VCMDQ_CONS_ERR_MASK (0x7Fu << 24)
#define VCMDQ_PROD 0x04u                    /* WR [19:0] */
#define VCMDQ_CONFIG 0x08u
#define  VCMDQ_CONFIG_EN 0x1u
#define VCMDQ_STATUS 0x0Cu
#define  VCMDQ_STATUS_ENABLED 0x1u
#define VCMDQ_GERROR 0x10u
#define VCMDQ_GERRORN 0x14u
#define  VCMDQ_GERROR_CMDQ_ERR 0x1u         /* a command error: CONS.ERR says which */
#define  VCMDQ_GERROR_CONS_DRAM_WR_ABT 0x2u /* writing CONS to CONS_INDX_BASE aborted */
#define  VCMDQ_GERROR_INIT_ERR 0x4u         /* enabled with a bad BASE: not enabled */
#define  VCMDQ_GERROR_MASK 0x7u
/* ... and page1. */
#define VCMDQ_BASE 0x00u                    /* 64 bits: ADDR [47:5], LOG2SIZE [4:0] */
#define  VCMDQ_BASE_ADDR_MASK 0x0000FFFFFFFFFFE0ull
#define  VCMDQ_BASE_LOG2SIZE_MASK 0x1Full
#define  VCMDQ_LOG2SIZE_MAX 19
#define VCMDQ_CONS_INDX_BASE 0x08u          /* 64 bits: ADDR [47:0] */

/* CONS.ERR codes: the SMMU's CERROR_* plus ILL_ACCESS. */
#define VCMDQ_CERROR_NONE 0
#define VCMDQ_CERROR_ILL 1
#define VCMDQ_CERROR_ABT 2
#define VCMDQ_CERROR_ATC_INV_SYNC 3
#define VCMDQ_CERROR_ILL_ACCESS 4

#define CMDQV_MAX_VCMDQS 128u
#define CMDQV_MAX_VINTFS 64u

#endif
