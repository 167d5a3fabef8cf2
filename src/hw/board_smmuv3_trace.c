/* board_smmuv3_trace.c — what an SMMU writes to the simulation's timeline trace
 * (iommulab/trace.h, docs/trace.md): each command it executed as a slice on the unit's track,
 * named by opcode (IHI 0070 §4), the TLBIs' time in the invalidation engine on a second
 * track, and each command queue's occupancy (PROD - CONS) as a counter. It is not the
 * accounting that charges those costs (board_smmuv3.c) and decides nothing: it only reports.
 */
#include <stdio.h>

#include <iommulab/trace.h>

#include "hw/board_smmuv3.h"
#include "iommulab/plat.h"

/* Opcode names (IHI 0070 §4.1.1 table of commands); the rest print as their number. */
static const char *const cmd_names[256] = {
	[0x01] = "CMD_PREFETCH_CONFIG", [0x02] = "CMD_PREFETCH_ADDR",
	[0x03] = "CMD_CFGI_STE",        [0x04] = "CMD_CFGI_STE_RANGE",
	[0x05] = "CMD_CFGI_CD",         [0x06] = "CMD_CFGI_CD_ALL",
	[0x07] = "CMD_CFGI_VMS_PIDM",
	[0x10] = "CMD_TLBI_NH_ALL",     [0x11] = "CMD_TLBI_NH_ASID",
	[0x12] = "CMD_TLBI_NH_VA",      [0x13] = "CMD_TLBI_NH_VAA",
	[0x18] = "CMD_TLBI_EL3_ALL",    [0x1a] = "CMD_TLBI_EL3_VA",
	[0x20] = "CMD_TLBI_EL2_ALL",    [0x21] = "CMD_TLBI_EL2_ASID",
	[0x22] = "CMD_TLBI_EL2_VA",     [0x23] = "CMD_TLBI_EL2_VAA",
	[0x28] = "CMD_TLBI_S12_VMALL",  [0x2a] = "CMD_TLBI_S2_IPA",
	[0x30] = "CMD_TLBI_NSNH_ALL",
	[0x40] = "CMD_ATC_INV",         [0x41] = "CMD_PRI_RESP",
	[0x44] = "CMD_RESUME",          [0x45] = "CMD_STALL_TERM",
	[0x46] = "CMD_SYNC",
};

#define CMD_SYNC_OPCODE 0x46 /* IHI 0070 §4.7.3 */

static const char *cmd_name(unsigned op, char *buf, size_t len)
{
	if (cmd_names[op & 0xff])
		return cmd_names[op & 0xff];
	snprintf(buf, len, "CMD_0x%02x", op & 0xff);
	return buf;
}

/* The unit's tracks, made on its first event (the board creates units before it knows
 * whether anything will be traced; a unit that executes nothing gets no track). */
static bool tracks(struct board_smmuv3 *bs)
{
	struct board_sim_track *tr = &bs->sim;
	char name[ILAB_TOPO_NAME_MAX + 32];

	if (!ilab_sim_tracing())
		return false;
	if (!tr->trace_ready) {
		snprintf(name, sizeof(name), "%s commands", bs->unit->name);
		tr->trace_cmds = ilab_sim_trace_track(name);
		snprintf(name, sizeof(name), "%s invalidation engine", bs->unit->name);
		tr->trace_engine = ilab_sim_trace_track(name);
		tr->trace_ready = true;
	}
	return tr->trace_cmds >= 0;
}

/* A CMD_SYNC also starts a flow to the CPU that waits for it: the driver ends it when its
 * poll sees the sync complete, naming the same entry address (plat_trace_flow_in). */
void board_smmuv3_trace_cmd(struct board_smmuv3 *bs, unsigned qi, unsigned op, uint64_t start,
			    uint64_t entry_pa)
{
	char buf[16];

	if (!tracks(bs))
		return;
	ilab_sim_trace_slice(bs->sim.trace_cmds, cmd_name(op, buf, sizeof(buf)), start,
			     plat_now_ns() - start, "queue", qi);
	if ((op & 0xff) == CMD_SYNC_OPCODE)
		ilab_sim_trace_flow_out(bs->sim.trace_cmds, "CMD_SYNC", entry_pa, start);
}

void board_smmuv3_trace_engine(struct board_smmuv3 *bs, unsigned op, uint64_t start,
			       uint64_t dur)
{
	char buf[16];

	if (tracks(bs))
		ilab_sim_trace_slice(bs->sim.trace_engine, cmd_name(op, buf, sizeof(buf)), start,
				     dur, NULL, 0);
}

/* Queue qi's registers: SMMU_CMDQ's, or ECMDQ n's group (qi = 1 + n). */
static uint64_t queue_reg(const struct board_smmuv3 *bs, unsigned qi, bool prod)
{
	const struct board_sim_track *tr = &bs->sim;

	if (!qi)
		return prod ? SMMU_REG_CMDQ_PROD : SMMU_REG_CMDQ_CONS;
	return tr->ecmdq_off + (qi - 1) * tr->ecmdq_stride +
	       (prod ? SMMU_ECMDQ_REG_PROD : SMMU_ECMDQ_REG_CONS);
}

/* Entries of queue qi published and not yet consumed, as the registers say now (cmd_done
 * comes after CONS has moved past the command). The registers are read from the model
 * directly: no simulated cost. */
void board_smmuv3_trace_queue(struct board_smmuv3 *bs, unsigned qi)
{
	struct board_cmdq_track *q = &bs->sim.q[qi];
	uint32_t m = (2u << q->q_log2) - 1, prod, cons, used;
	char name[ILAB_TOPO_NAME_MAX + 32];

	if (!tracks(bs) || !q->listed)
		return;
	prod = (uint32_t)smmu_mmio_read(bs->smmu, queue_reg(bs, qi, true), 4);
	cons = (uint32_t)smmu_mmio_read(bs->smmu, queue_reg(bs, qi, false), 4);
	used = (prod - cons) & m;
	if (qi)
		snprintf(name, sizeof(name), "%s ecmdq%u", bs->unit->name, qi - 1);
	else
		snprintf(name, sizeof(name), "%s cmdq", bs->unit->name);
	ilab_sim_trace_counter(name, "entries", used);
}
