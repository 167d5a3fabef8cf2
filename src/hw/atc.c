/* atc.c — a PCIe endpoint's Address Translation Cache: set-associative, LRU or FIFO, entries of
 * any translation size tagged by PASID, invalidation by range. See include/iommulab/atc.h.
 * It is not timing: the DMA engine that owns it decides what a hit or a miss costs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iommulab/atc.h"

struct atc_entry {
	uint64_t base;    /* input address of the span (aligned to 2^shift) */
	uint64_t pa;      /* output base */
	uint64_t age;     /* LRU: last use; FIFO: fill time */
	uint32_t ssid;
	uint8_t shift;
	bool valid, ssv, read, write;
};

struct ilab_atc {
	struct ilab_atc_config cfg;
	uint32_t sets, ways, set_bits;
	struct atc_entry *e;   /* sets * ways */
	uint64_t clock;
	uint64_t shifts;       /* bit n: an entry of span 2^n may be present */
	struct ilab_atc_stats st;
};

int ilab_atc_create(const struct ilab_atc_config *cfg, struct ilab_atc **out)
{
	struct ilab_atc *a;
	uint32_t ways, sets = 1, bits = 0;

	if (!cfg || !out || !cfg->entries || cfg->entries > (1u << 20) ||
	    (cfg->policy != ILAB_ATC_LRU && cfg->policy != ILAB_ATC_FIFO))
		return -EINVAL;
	ways = cfg->ways == 0 || cfg->ways >= cfg->entries ? cfg->entries : cfg->ways;
	while ((sets << 1) * ways <= cfg->entries) {
		sets <<= 1;
		bits++;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->e = calloc((size_t)sets * ways, sizeof(*a->e));
	if (!a->e) {
		free(a);
		return -ENOMEM;
	}
	a->cfg = *cfg;
	a->sets = sets;
	a->ways = ways;
	a->set_bits = bits;
	a->st.capacity = sets * ways;
	a->st.sets = sets;
	a->st.ways = ways;
	*out = a;
	return 0;
}

void ilab_atc_destroy(struct ilab_atc *atc)
{
	if (!atc)
		return;
	free(atc->e);
	free(atc);
}

/* The set of a span: multiplicative hash of its page number, size and PASID, so consecutive
 * pages spread over the sets. */
static uint32_t set_of(const struct ilab_atc *a, uint64_t base, unsigned shift, uint32_t ssid)
{
	uint64_t key = (base >> shift) ^ ((uint64_t)shift << 58) ^ ((uint64_t)ssid << 40);

	if (!a->set_bits)
		return 0;
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - a->set_bits));
}

static struct atc_entry *probe(struct ilab_atc *a, uint32_t ssid, bool ssv, uint64_t iova,
			       unsigned shift)
{
	uint64_t base = iova & ~((1ull << shift) - 1);
	struct atc_entry *e = &a->e[(size_t)set_of(a, base, shift, ssv ? ssid : 0) * a->ways];

	for (uint32_t w = 0; w < a->ways; w++, e++)
		if (e->valid && e->shift == shift && e->base == base && e->ssv == ssv &&
		    (!ssv || e->ssid == ssid))
			return e;
	return NULL;
}

bool ilab_atc_lookup(struct ilab_atc *atc, uint32_t ssid, bool ssv, uint64_t iova, bool write,
		     struct ilab_atc_xlate *out)
{
	struct atc_entry *e = NULL;

	if (!atc)
		return false;
	atc->st.lookups++;
	for (uint64_t m = atc->shifts; m && !e; m &= m - 1)
		e = probe(atc, ssid, ssv, iova, (unsigned)__builtin_ctzll(m));
	if (!e || (write ? !e->write : !e->read)) {
		atc->st.misses++;
		return false;
	}
	atc->st.hits++;
	if (atc->cfg.policy == ILAB_ATC_LRU)
		e->age = ++atc->clock;
	if (out) {
		out->pa = e->pa | (iova & ((1ull << e->shift) - 1));
		out->shift = e->shift;
		out->read = e->read;
		out->write = e->write;
	}
	return true;
}

int ilab_atc_fill(struct ilab_atc *atc, uint32_t ssid, bool ssv, uint64_t iova,
		  const struct ilab_atc_xlate *x)
{
	struct atc_entry *e, *victim = NULL;
	uint64_t base;

	if (!atc || !x || x->shift < 12 || x->shift > 63)
		return -EINVAL;
	if (!x->read && !x->write)
		return 0; /* a "no access" completion: nothing to remember */
	base = iova & ~((1ull << x->shift) - 1);
	e = probe(atc, ssid, ssv, iova, x->shift);
	if (!e) {
		e = &atc->e[(size_t)set_of(atc, base, x->shift, ssv ? ssid : 0) * atc->ways];
		for (uint32_t w = 0; w < atc->ways; w++, e++) {
			if (!e->valid) {
				victim = e;
				break;
			}
			if (!victim || e->age < victim->age)
				victim = e;
		}
		e = victim;
		if (e->valid)
			atc->st.evictions++;
	}
	*e = (struct atc_entry){ .base = base, .pa = x->pa & ~((1ull << x->shift) - 1),
				 .age = ++atc->clock, .ssid = ssv ? ssid : 0, .shift = x->shift,
				 .valid = true, .ssv = ssv, .read = x->read, .write = x->write };
	atc->shifts |= 1ull << x->shift;
	atc->st.fills++;
	return 0;
}

uint64_t ilab_atc_invalidate(struct ilab_atc *atc, uint32_t ssid, bool ssv, uint64_t addr,
			     unsigned size_log2, bool global)
{
	uint64_t lo, hi, n = 0;
	size_t total;

	if (!atc)
		return 0;
	atc->st.inv_requests++;
	if (size_log2 >= 64) {
		lo = 0;
		hi = UINT64_MAX;
	} else {
		lo = addr & ~((1ull << size_log2) - 1);
		hi = lo + ((1ull << size_log2) - 1);
	}
	total = (size_t)atc->sets * atc->ways;
	for (size_t i = 0; i < total; i++) {
		struct atc_entry *e = &atc->e[i];
		uint64_t end;

		if (!e->valid)
			continue;
		/* PCIe ATS: a request without PASID targets the entries filled without one; with
		 * PASID, that PASID's entries, or every PASID's with the Global flag. */
		if (ssv ? (!e->ssv || (!global && e->ssid != ssid)) : e->ssv)
			continue;
		end = e->base + ((1ull << e->shift) - 1);
		if (end < lo || e->base > hi)
			continue;
		e->valid = false;
		n++;
	}
	atc->st.invalidated += n;
	return n;
}

void ilab_atc_flush(struct ilab_atc *atc)
{
	if (!atc)
		return;
	for (size_t i = 0; i < (size_t)atc->sets * atc->ways; i++)
		atc->e[i].valid = false;
	atc->shifts = 0;
}

void ilab_atc_get_stats(const struct ilab_atc *atc, struct ilab_atc_stats *st)
{
	if (atc && st)
		*st = atc->st;
}

uint32_t ilab_atc_occupancy(const struct ilab_atc *atc)
{
	uint32_t n = 0;

	for (size_t i = 0; atc && i < (size_t)atc->sets * atc->ways; i++)
		n += atc->e[i].valid;
	return n;
}
