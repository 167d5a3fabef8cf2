/* board_dma.c — device DMA on the board: a transfer by a requester id is translated page by
 * page through its unit's model (the architecture's translate, iommu_arch.h) and copied to or
 * from simulated memory.
 * It is not a DMA engine model (no timing beyond what the architecture charges per page and
 * what plat charges for memory accesses).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <iommulab/trace.h>

#include "hw/board_internal.h"

static int board_dma(struct ilab_board *b, unsigned unit, uint32_t sid, uint32_t ssid, bool ssv,
		     uint64_t iova, void *rbuf, const void *wbuf, size_t len,
		     struct ilab_board_fault *fault)
{
	const bool write = wbuf != NULL;
	struct board_unit *bu;
	size_t done = 0;
	uint64_t t0 = UINT64_MAX; /* tracing: when the transfer began */

	if (fault)
		memset(fault, 0, sizeof(*fault));
	if (!b || unit >= b->nr_units || (len && !rbuf && !wbuf))
		return -EINVAL;
	bu = board_unit_modelled(b, unit);
	if (!bu)
		return -ENODEV;
	if (plat_sim && ilab_sim_tracing())
		t0 = plat_now_ns();
	while (done < len) {
		struct ilab_iommu_dma_req req = { .sid = sid, .ssid = ssid, .ssv = ssv,
						  .iova = iova + done, .write = write };
		struct ilab_iommu_dma_rsp rsp;
		uint64_t page, chunk;
		int rc;

		rc = bu->unit.arch->translate(&bu->unit, &req, &rsp, fault);
		if (rc)
			return rc;
		/* Never cross a translation's boundary (nor a 4K page when it is bigger: the
		 * next page may be mapped elsewhere only if its translation says so). */
		page = 1ull << rsp.page_shift;
		chunk = page - (req.iova & (page - 1));
		if (chunk > len - done)
			chunk = len - done;
		if (write)
			rc = ilab_mem_write(b->mem, rsp.pa, (const char *)wbuf + done, chunk);
		else
			rc = ilab_mem_read(b->mem, rsp.pa, (char *)rbuf + done, chunk);
		if (rc)
			return -EFAULT;
		done += chunk;
	}
	if (t0 != UINT64_MAX) { /* the trace's device rows: who moved how much, when */
		char name[64];

		snprintf(name, sizeof(name), "DMA %s sid 0x%x", write ? "write" : "read", sid);
		ilab_sim_trace_async(name, t0, plat_now_ns() - t0, "bytes", (int64_t)len);
	}
	return 0;
}

int ilab_board_dma_read(struct ilab_board *b, unsigned unit, uint32_t sid, uint32_t ssid,
			bool ssv, uint64_t iova, void *buf, size_t len,
			struct ilab_board_fault *fault)
{
	if (len && !buf)
		return -EINVAL;
	return board_dma(b, unit, sid, ssid, ssv, iova, buf, NULL, len, fault);
}

int ilab_board_dma_write(struct ilab_board *b, unsigned unit, uint32_t sid, uint32_t ssid,
			 bool ssv, uint64_t iova, const void *buf, size_t len,
			 struct ilab_board_fault *fault)
{
	if (len && !buf)
		return -EINVAL;
	return board_dma(b, unit, sid, ssid, ssv, iova, NULL, buf, len, fault);
}
