/* board_dma.c — device DMA on the board: a transfer by a StreamID is translated page by page
 * through its SMMU model (smmu_translate) and copied to or from simulated memory.
 * It is not a DMA engine model (no timing beyond the profile's smmu tlb_lookup_ns per page and
 * what plat charges for memory accesses).
 */
#include <errno.h>
#include <string.h>

#include <iommulab/sim.h>

#include "hw/board_internal.h"

static int board_dma(struct ilab_board *b, unsigned smmu_index, uint32_t sid, uint32_t ssid,
		     bool ssv, uint64_t iova, void *rbuf, const void *wbuf, size_t len,
		     struct ilab_board_fault *fault)
{
	const bool write = wbuf != NULL;
	size_t done = 0;

	if (fault)
		memset(fault, 0, sizeof(*fault));
	if (!b || smmu_index >= b->nr_smmus || (len && !rbuf && !wbuf))
		return -EINVAL;
	if (!b->smmus[smmu_index].smmu)
		return -ENODEV;
	while (done < len) {
		struct smmu_txn_req req = { .sid = sid, .ssid = ssid, .ssv = ssv,
					    .iova = iova + done, .write = write };
		struct smmu_txn_rsp rsp;
		unsigned shift;
		uint64_t page, chunk;
		int rc;

		plat_charge_ns(b->tlb_lookup_ns); /* the lookup; a walk's reads are charged by mem */
		ilab_sim_sync(); /* the walk sees the tables as they are at this virtual time */
		smmu_translate(b->smmus[smmu_index].smmu, &req, &rsp);
		if (rsp.status != SMMU_TXN_OK) {
			if (fault) {
				fault->event = rsp.event;
				fault->recorded = rsp.event_recorded;
				fault->iova = req.iova;
			}
			return -EIO;
		}
		/* Never cross a translation's boundary (nor a 4K page when it is bigger: the
		 * next page may be mapped elsewhere only if its translation says so). */
		shift = rsp.page_shift ? rsp.page_shift : 12;
		page = 1ull << shift;
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
	return 0;
}

int ilab_board_dma_read(struct ilab_board *b, unsigned smmu_index, uint32_t sid, uint32_t ssid,
			bool ssv, uint64_t iova, void *buf, size_t len,
			struct ilab_board_fault *fault)
{
	if (len && !buf)
		return -EINVAL;
	return board_dma(b, smmu_index, sid, ssid, ssv, iova, buf, NULL, len, fault);
}

int ilab_board_dma_write(struct ilab_board *b, unsigned smmu_index, uint32_t sid, uint32_t ssid,
			 bool ssv, uint64_t iova, const void *buf, size_t len,
			 struct ilab_board_fault *fault)
{
	if (len && !buf)
		return -EINVAL;
	return board_dma(b, smmu_index, sid, ssid, ssv, iova, NULL, buf, len, fault);
}
